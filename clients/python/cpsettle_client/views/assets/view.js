// The hand view: draws a settlement from the JSON embedded in the page and checks its proof
// with the functions of proof.mjs (inlined above this file). A VIEW: it shows what the
// settlement holds and verifies it; it computes nothing that decides money.
//
// Its words are in the reader's language: the page embeds, as data made by cpsettle from its
// gettext catalogs (cpsettle_client/i18n), every language's messages, the names of the
// settlement's codes (from the contract's descriptors), and CLDR's number and currency formats
// (through Babel); PLURAL_RULES (each catalog's gettext plural rule, written above this file by
// views/page.py) picks a plural form. The messages below are extracted by `pybabel extract`
// (the calls to _, ngettext and pgettext, with '{name}' fields).

// ---------------------------------------------------------------- languages
const I18N = embeddedData('cpsettle-i18n') ?? { languages: {}, fallback: 'en' };
let LANG = null; // the current language's data: {code, tag, name, messages, labels, number, money}

function embeddedData(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

/** '{name}' fields of `text` filled from `args` (values formatted by `shownArg`). */
function fill(text, args) {
  if (!args) return text;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in args ? shownArg(args[k]) : m));
}

/** An argument as shown: a number in the language's digits, money with its currency. */
function shownArg(v) {
  if (v && typeof v === 'object') {
    if ('money' in v) return money(v.money, v.currency, v.signed);
    if ('number' in v) return number(v.number, v.signed);
    if ('t' in v) return fill(_(v.t), v.a);
  }
  return String(v ?? '');
}

function _(message, args) {
  const t = LANG?.messages[message];
  return fill(typeof t === 'string' ? t : message, args);
}

/** Like _, for a message with elements among its arguments: the parts, to append. */
function _nodes(message, args) {
  const t = LANG?.messages[message];
  const text = typeof t === 'string' ? t : message;
  return text.split(/(\{\w+\})/).filter(Boolean).map((part) => {
    const k = /^\{(\w+)\}$/.exec(part)?.[1];
    if (!k || !(k in args)) return part;
    return args[k] instanceof Node ? args[k] : shownArg(args[k]);
  });
}

function ngettext(singular, plural, n, args) {
  const forms = LANG?.messages[singular];
  const rule = PLURAL_RULES[LANG?.code] ?? ((k) => Number(k !== 1));
  const english = Number(n !== 1) ? plural : singular;
  const text = Array.isArray(forms) ? (forms[rule(n)] ?? english) : english;
  return fill(text, { n: { number: n }, ...args });
}

function pgettext(context, message, args) {
  const t = LANG?.messages[`${context}\u0004${message}`];
  return fill(typeof t === 'string' ? t : message, args);
}

/** A code as English words (a code this page has no name for): 'SOME_CODE' -> 'Some code'. */
function words(code) {
  const w = String(code).replace(/_/g, ' ').toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

/** The name of a settlement code (an enum value's name, a natural's name) in the language;
 * *_UNSPECIFIED: ''. The names are the contract's, made into a table by cpsettle. */
function label(code) {
  if (code === undefined || code === null || code === '') return '';
  const known = LANG?.labels[String(code)];
  return known !== undefined ? known : words(code);
}

/** A code as an element that says which code it names (tests and screen readers read it). */
function codeText(code, tag = 'span', attrs = {}) {
  return h(tag, { ...attrs, 'data-code': code ?? '' }, label(code));
}

const isCode = (value, name) => String(value ?? '').endsWith(name);

/** The language to show: the page's own when it was made for one, else the first of the
 * browser's languages this page has (CLDR's likely subtags: zh-TW is Traditional Chinese). */
function pickLanguage(wanted) {
  const have = Object.keys(I18N.languages);
  const lower = Object.fromEntries(have.map((c) => [c.toLowerCase(), c]));
  for (const tag of wanted) {
    const parts = String(tag).replace(/-/g, '_').split('_').filter(Boolean);
    if (!parts.length) continue;
    parts[0] = parts[0].toLowerCase();
    const candidates = [parts.join('_')];
    const likely = (I18N.likely ?? {})[parts.join('_')] ?? (I18N.likely ?? {})[parts[0]];
    if (likely && !parts.slice(1).some((p) => p.length === 4)) {
      const [lang, ...rest] = likely.split('_');
      const script = rest.find((p) => p.length === 4);
      if (lang === parts[0] && script) candidates.push(`${lang}_${script}`);
    }
    for (let i = parts.length - 1; i > 0; i -= 1) candidates.push(parts.slice(0, i).join('_'));
    const found = candidates.find((c) => lower[c.toLowerCase()]);
    if (found) return lower[found.toLowerCase()];
  }
  return null;
}

function setLanguage(code) {
  LANG = I18N.languages[code] ?? I18N.languages[I18N.fallback] ?? null;
  if (!LANG) return;
  document.documentElement.lang = LANG.tag;
  const picker = document.getElementById('language');
  if (picker) picker.value = LANG.code;
}

// ---------------------------------------------------------------- numbers and money (CLDR)
function grouped(digits) {
  const [primary, secondary] = LANG?.number.grouping ?? [3, 3];
  const group = LANG?.number.group ?? ',';
  if (digits.length <= primary) return digits;
  const out = [digits.slice(-primary)];
  let rest = digits.slice(0, -primary);
  while (rest.length > secondary) {
    out.unshift(rest.slice(-secondary));
    rest = rest.slice(0, -secondary);
  }
  out.unshift(rest);
  return out.join(group);
}

/** An int64 as stored (a decimal string or a number), split into its sign and digits. */
function parts(value) {
  const s = String(value ?? '0').trim();
  const m = /^([-+]?)(\d+)$/.exec(s);
  if (!m) return null;
  const digits = m[2].replace(/^0+(?=\d)/, '');
  return { negative: m[1] === '-' && digits !== '0', digits };
}

/** A count or a number of units in the language's digits; `signed`: a gain shows its plus. */
function number(value, signed = false) {
  const p = parts(value);
  if (!p) return String(value);
  const sym = LANG?.number ?? { minus: '-', plus: '+' };
  const sign = p.negative ? sym.minus : (signed && p.digits !== '0' ? sym.plus : '');
  return sign + grouped(p.digits);
}

/** Minor units of `currency` as money, by CLDR's pattern for the language and the currency's
 * ISO 4217 minor digits (both given by cpsettle for every currency on the page). */
function money(value, currency, signed = false) {
  const p = parts(value);
  const code = currency || 'XXX';
  const t = LANG?.money[code];
  if (!p || !t) return `${number(value, signed)} ${code}`;
  const padded = p.digits.padStart(t.digits + 1, '0');
  const whole = padded.slice(0, padded.length - t.digits);
  const frac = t.digits ? padded.slice(-t.digits) : '';
  const body = grouped(whole) + (t.digits ? LANG.number.decimal + frac : '');
  if (p.negative) return t.negative[0] + body + t.negative[1];
  if (signed && p.digits !== '0') {
    const sym = LANG.number;
    return t.negative[0].replace(sym.minus, sym.plus) + body +
      t.negative[1].replace(sym.minus, sym.plus);
  }
  return t.positive[0] + body + t.positive[1];
}

function moneyText(value, currency, signed = false) {
  return h('span', { class: 'money', 'data-amount': String(value ?? '0') },
    money(value, currency, signed));
}

// ---------------------------------------------------------------- the settlement's sentences
// The sentences are the service's, signed, in English; sentences.js (inlined above) says each in
// the reader's language from the settlement's fields, where those fields say the signed English
// exactly. A translated sentence keeps its signed English in its title (and data-signed); one
// that could not be said otherwise is the signed English, marked lang="en".

function sentence(said, signedText, attrs = {}) {
  const translated = said.lang !== 'en';
  return h('span', { ...attrs, lang: said.lang, title: translated ? signedText : undefined,
    'data-signed': translated ? signedText : undefined }, said.text);
}

// ---------------------------------------------------------------- DOM helpers (text, never HTML)
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// ---------------------------------------------------------------- cards
const SUITS = { s: '\u2660', h: '\u2665', d: '\u2666', c: '\u2663' };
function suitName(s) {
  return { s: _('spades'), h: _('hearts'), d: _('diamonds'), c: _('clubs') }[s];
}
function rankName(r) {
  return {
    A: _('ace'), K: _('king'), Q: _('queen'), J: _('jack'), T: _('ten'), 9: _('nine'),
    8: _('eight'), 7: _('seven'), 6: _('six'), 5: _('five'), 4: _('four'), 3: _('three'),
    2: _('two'),
  }[r];
}

/** One card as the settlement spells it ("Td"): its symbol, its words, its suit's colour. */
function card(spelling) {
  const text = String(spelling);
  if (/^X/i.test(text)) { // a joker (the deck option); what it plays as is said under the row
    return h('span', { class: 'card card-joker', title: _('joker'), 'data-card': text },
      h('span', { 'aria-hidden': 'true' }, _('Joker')), h('span', { class: 'sr' }, _('joker')));
  }
  const suit = text.slice(-1).toLowerCase();
  const rank = text.slice(0, -1).toUpperCase().replace(/^10$/, 'T');
  if (!SUITS[suit] || !rankName(rank)) {
    return h('span', { class: 'card card-unknown', title: text }, text);
  }
  const shown = rank === 'T' ? '10' : rank;
  const said = _('{rank} of {suit}', { rank: rankName(rank), suit: suitName(suit) });
  return h('span', { class: `card suit-${suit}`, title: said, 'data-card': text },
    h('span', { class: 'rank', 'aria-hidden': 'true' }, shown),
    h('span', { class: 'pip', 'aria-hidden': 'true' }, SUITS[suit]),
    h('span', { class: 'sr' }, said));
}

function cards(list) {
  return h('span', { class: 'cards' }, (list ?? []).map(card));
}

/** What each joker of a row plays as: "Xj as Qh" (in the row's order of jokers). */
function jokers(row) {
  const jokerCards = (row.cards ?? []).filter((c) => /^X/i.test(String(c)));
  return (row.jokerCards ?? []).map((stands, i) => h('span', { class: 'joker-as' },
    _('{joker} as {card}', { joker: jokerCards[i] ?? 'Xj', card: stands })));
}

function handName(row, said) {
  // the hand's name in the reader's language ("Full de reyes y treses"), said from its class and
  // cards where they say the service's English name; else that name, marked English
  // (a row without a name of its own says its class, in the reader's language)
  const name = said.handName(row);
  return h('div', { class: 'hand-name' },
    h('span', { 'data-code': row.handClass ?? '', class: 'hand-class',
      lang: name.text ? name.lang : LANG?.tag, title: name.lang !== 'en' ? row.name : undefined },
    name.text || label(row.handClass)),
    row.royalty ? h('span', { class: 'royalty' }, ' \u2014 ',
      _('royalty {units}', { units: { number: row.royalty } })) : null,
    (row.jokerCards ?? []).length ? [' \u2014 ', jokers(row)] : null);
}

// ---------------------------------------------------------------- the settlement, drawn
function ids(s) {
  const c = s.context ?? {};
  const p = s.profile ?? {};
  const sig = s.signature ?? {};
  const signed = sig.algorithm === 'SIGNATURE_ALGORITHM_ED25519';
  const rows = [
    [_('Hand'), c.handId], [_('Table'), c.tableId], [_('Round'), c.roundId],
    [_('Dealer'), c.dealerId],
    [_('Rules'), p.name && _('{name} version {version} ({source})',
      { name: p.name, version: p.version ?? '?', source: p.source ?? '?' })],
    [_('Unit value'), s.unitValue !== undefined &&
      _('{money} a unit', { money: { money: s.unitValue, currency: s.currency } })],
    [_('Currency'), s.currency],
    [_('Button seat'), s.buttonSeat], [_('Button order'), (s.order ?? []).join(' \u2192 ')],
    [_('Issued at'), s.issuedAt],
    [_('Signed'), signed ? _nodes('{algorithm}, key {key}', { algorithm: codeText(sig.algorithm), key: sig.keyId ?? '' })
      : codeText(sig.algorithm, 'span', {}).textContent ? codeText(sig.algorithm)
        : h('span', { 'data-code': sig.algorithm ?? '' }, _('no signature'))],
    [_('Settlement id'), s.settlementId, 'hex'], [_('Settlement digest (stored)'), s.settlementDigest, 'hex'],
    [_('Request digest'), s.requestDigest, 'hex'], [_('Profile digest'), p.digest, 'hex'],
    [_('Engine'), s.engineVersion], [_('Engine digest'), s.engineDigest, 'hex'],
  ];
  return h('dl', { class: 'ids' }, rows.filter(([, v]) => v !== undefined && v !== '' && v !== false)
    .map(([k, v, kind]) => [h('dt', {}, k), h('dd', { class: kind === 'hex' ? 'hex' : '' }, v)]));
}

/** The player's badges: fouled (and why), natural, surrendered, Fantasyland; each says its code's
 * name (the status the settlement gives, or the flag's). */
function statusBadges(p) {
  const out = [];
  const status = (name) => (isCode(p.status, name) ? p.status : `PLAYER_STATUS_${name}`);
  if (p.fouled || isCode(p.status, 'FOULED')) {
    const why = (p.foulReasons ?? []).map((r) => codeText(r));
    out.push(h('span', { class: 'badge bad', 'data-status': 'fouled' }, '\u2717 ',
      codeText(status('FOULED')),
      why.length ? [': ', why.flatMap((w, i) => (i ? ['; ', w] : [w]))] : null));
  }
  if (p.natural || isCode(p.status, 'NATURAL')) {
    out.push(h('span', { class: 'badge good', 'data-status': 'natural' }, '\u2605 ',
      codeText(status('NATURAL')), p.natural ? [': ', codeText(p.natural)] : null));
  } else if (p.declaredNatural) {
    out.push(h('span', { class: 'badge', 'data-status': 'declared' },
      _('Declared natural {natural} (not granted)', { natural: label(p.declaredNatural) })));
  }
  if (p.surrendered || isCode(p.status, 'SURRENDERED')) {
    out.push(h('span', { class: 'badge warn', 'data-status': 'surrendered' }, '\u2691 ',
      codeText(status('SURRENDERED'))));
  }
  if (p.fantasyland?.qualifies) {
    out.push(h('span', { class: 'badge good', 'data-status': 'fantasyland' },
      ngettext('Fantasyland ({n} card)', 'Fantasyland ({n} cards)', Number(p.fantasyland.cards ?? 0))));
  }
  if (!out.length && p.status) out.push(codeText(p.status, 'span', { class: 'badge', 'data-status': 'other' }));
  return out;
}

/** A player without rows (a natural, a false declaration of one): the thirteen cards, from
 * the request the page was made with (a natural is settled on the cards as dealt: the
 * settlement has no rows for it). */
function looseCards(p, request) {
  const sent = request?.players?.[p.playerId];
  if (!sent?.cards?.length) {
    return h('p', { class: 'note' }, p.natural || isCode(p.status, 'NATURAL')
      ? _('No rows in the settlement: a natural is settled on the thirteen cards as dealt.')
      : _('No rows in the settlement.'));
  }
  return h('div', { class: 'natural-cards' },
    h('p', { class: 'note' }, request.matches
      ? _('The thirteen cards, from the request (its digest is the settlement\u2019s):')
      : _('The thirteen cards, from a request whose digest is NOT the settlement\u2019s:')),
    cards(sent.cards));
}

function player(p, s, request, said) {
  const cur = s.currency;
  const money_ = [
    [_('Net units'), number(p.netUnits ?? 0, true)],
    [_('Before rake'), money(p.moneyBeforeRake ?? 0, cur, true)],
    [_('Rake'), money(p.rake ?? 0, cur)],
    [_('Stack'), p.stack !== undefined ? money(p.stack, cur) : _('no cap')],
  ];
  const rows = p.rows ?? [];
  return h('article', { class: 'player', 'data-player': p.playerId ?? '' },
    h('h3', {}, `${p.playerId ?? '?'} `, h('span', { class: 'seat' }, _('seat {seat}', { seat: p.seat ?? '?' }))),
    h('p', { class: 'badges' }, statusBadges(p)),
    rows.length ? null : looseCards(p, request),
    rows.length ? h('table', { class: 'rows' },
      h('caption', { class: 'sr' }, _('{player}\u2019s rows', { player: p.playerId })),
      h('tbody', {}, rows.map((r) => h('tr', { 'data-row': r.row ?? '' },
        h('th', { scope: 'row', 'data-code': r.row ?? '' }, label(r.row)),
        h('td', {}, cards(r.cards), handName(r, said)))))) : null,
    h('p', { class: 'net' }, _('Net'), ' ', h('strong', {}, moneyText(p.netMoney ?? 0, cur, true))),
    h('dl', { class: 'money-list' }, money_.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    p.fantasyland?.text ? h('p', { class: 'note fantasyland' }, sentence(said.fantasyland(p), p.fantasyland.text)) : null,
    p.text ? h('p', { class: 'sentence' }, sentence(said.player(p), p.text)) : null);
}

function side(pairRow, who, hand, said) {
  const won = pairRow.winner && pairRow.winner === who;
  return h('td', { class: won ? 'win' : '', 'data-side': who },
    won ? h('span', { class: 'winmark' }, '\u2714', h('span', { class: 'winword' }, ' ', _('wins')), ' ') : null,
    cards(hand?.cards), hand ? handName(hand, said) : null);
}

function pair(pr, said) {
  const a = pr.first ?? '?';
  const b = pr.second ?? '?';
  const rows = (pr.rows ?? []).map((r) => h('tr', { 'data-row': r.row ?? '' },
    h('th', { scope: 'row', 'data-code': r.row ?? '' }, label(r.row)),
    side(r, a, r.first, said), side(r, b, r.second, said),
    h('td', { class: 'num' }, number(r.units ?? 0, true)),
    h('td', { class: 'sentence' }, r.winner ? '' : [_('tie'), ' \u2014 '], sentence(said.row(pr, r), r.text))));
  const items = (pr.items ?? []).map((it) => h('li', { 'data-kind': it.kind ?? '' },
    codeText(it.kind, 'span', { class: 'item-kind' }), ' ',
    h('span', { class: 'item-units' }, ngettext('{units} unit', '{units} units', Math.abs(Number(it.units ?? 0)),
      { units: { number: it.units ?? 0, signed: true } })), ': ',
    sentence(said.item(pr, it), it.text, { class: 'item-text' })));
  return h('details', { class: 'pair', open: true, 'data-pair': `${a}-${b}` },
    h('summary', {}, h('strong', {}, _('{first} v {second}', { first: a, second: b })), ' (',
      codeText(pr.kind, 'span', { class: 'pair-kind' }), ') \u2014 ', sentence(said.pair(pr), pr.text, { class: 'pair-text' })),
    rows.length ? h('div', { class: 'scroll' }, h('table', { class: 'pair-rows' },
      h('caption', { class: 'sr' }, _('{first} against {second}, row by row; units from {first}\u2019s side', { first: a, second: b })),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, _('Row')),
        h('th', { scope: 'col' }, a), h('th', { scope: 'col' }, b),
        h('th', { scope: 'col', class: 'num' }, _('Units ({player})', { player: a })),
        h('th', { scope: 'col' }, _('Why')))),
      h('tbody', {}, rows))) : null,
    items.length ? h('ul', { class: 'items' }, items) : null,
    h('p', { class: 'pair-total' }, _('Units for {player}: {units}', { player: a, units: { number: pr.units ?? 0, signed: true } })));
}

function payments(s, said) {
  const cur = s.currency;
  const rows = (s.pairs ?? []).filter((pr) => pr.payer || Number(pr.owed ?? 0) || Number(pr.paid ?? 0))
    .map((pr) => {
      const capped = pr.cap && label(pr.cap);
      return h('tr', { 'data-pair': `${pr.first}-${pr.second}` },
        h('td', { 'data-col': 'payer' }, pr.payer ?? ''), h('td', { 'data-col': 'payee' }, pr.payee ?? ''),
        h('td', { class: 'num', 'data-col': 'owed' }, money(pr.owed ?? 0, cur)),
        h('td', { 'data-col': 'cap', 'data-code': pr.cap ?? '' }, capped || '\u2014'),
        h('td', { class: 'num', 'data-col': 'paid' }, money(pr.paid ?? 0, cur)));
    });
  const heads = [['payer', _('Payer')], ['payee', _('Payee')], ['owed', _('Owed')],
    ['cap', _('Cap')], ['paid', _('Paid')]];
  return h('section', { class: 'payments' },
    h('h2', {}, _('Payments, in button order')),
    rows.length ? h('div', { class: 'scroll' }, h('table', {},
      h('thead', {}, h('tr', {}, heads.map(([k, t]) =>
        h('th', { scope: 'col', class: k === 'owed' || k === 'paid' ? 'num' : '', 'data-col': k }, t)))),
      h('tbody', {}, rows))) : h('p', {}, _('No money changes hands.')),
    h('p', { class: 'rake' }, _('Rake:'), ' ', h('strong', {}, moneyText(s.rake ?? '0', cur))),
    (s.text ?? []).length ? h('ul', { class: 'totals' }, said.totals().map((x, i) => h('li', {}, sentence(x, s.text[i])))) : null);
}

/** The whole settlement as elements (used by the hand page and by each hand of the report). */
function settlementView(s, request) {
  const players = s.players ?? [];
  const said = sentencesOf(s, LANG);
  const c = s.context ?? {};
  const where = [[_('hand'), c.handId], [_('table'), c.tableId], [_('round'), c.roundId],
    [_('dealer'), c.dealerId], [_('rules'), s.profile?.name],
    [_('unit'), s.unitValue !== undefined ? money(s.unitValue, s.currency) : '']]
    .filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(' \u00b7 ');
  return [
    h('p', { class: 'where' }, where),
    h('section', { class: 'players-section' }, h('h2', {}, _('Players, in button order')),
      h('div', { class: 'players' }, players.map((p) => player(p, s, request, said)))),
    h('section', { class: 'pairs-section' }, h('h2', {}, _('Each pair')), (s.pairs ?? []).map((pr) => pair(pr, said))),
    payments(s, said),
    h('section', { class: 'context' }, h('h2', {}, _('Audit context and ids')), ids(s)),
  ];
}

// ---------------------------------------------------------------- verification, said plainly
function failureWords(code) {
  return {
    file: _('the embedded data is not a settlement'),
    settlement_id: _('the settlement id does not follow from the request, profile and engine digests'),
    settlement_digest: _('the settlement digest recomputed in this browser does not match the stored one: the content was changed'),
    signature: _('the signature is not valid for this content'),
    'signature.key_id': _('the key that signed it is not in the key set'),
    'signature.key_window': _('the key was not in service at the time of issue'),
  }[code] ?? code;
}

async function fingerprint(publicKey) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', publicKey));
  return toHex(d).slice(0, 16);
}

/** Verify one stored settlement (once per key set) and write the verdict into `box`. */
async function showVerdict(hand) {
  const { box, stored } = hand;
  if (!globalThis.crypto?.subtle) {
    box.dataset.verdict = 'unchecked';
    box.replaceChildren(h('p', { class: 'verdict-line' }, '? ', _('NOT CHECKED: this browser offers no WebCrypto here (open the page from a file or over https).')));
    return;
  }
  if (hand.checkedWith !== keySet) {
    box.replaceChildren(h('p', { class: 'verdict-line' }, _('Checking\u2026')));
    box.dataset.verdict = 'checking';
    hand.checkedWith = keySet;
    try {
      hand.result = { r: await verifySettlement(stored, keySet?.keys ?? null), keys: keySet };
      const k = hand.result.r.keyId && keySet?.keys.get(hand.result.r.keyId);
      hand.result.fingerprint = k ? await fingerprint(k.publicKey) : null;
    } catch (e) {
      hand.result = { error: e };
    }
  }
  drawVerdict(hand);
}

function drawVerdict(hand) {
  const { box } = hand;
  if (!hand.result) return;
  if (hand.result.error) {
    const e = hand.result.error;
    box.dataset.verdict = 'unchecked';
    box.replaceChildren(h('p', { class: 'verdict-line' }, '? ', _('NOT CHECKED: this browser could not verify ({error}); it may lack Ed25519 in WebCrypto.', { error: `${e.name}: ${e.message}` })));
    return;
  }
  const { r, keys } = hand.result;
  const checks = [];
  if (r.failures.includes('file')) {
    checks.push(h('li', {}, `\u2717 ${failureWords('file')}: ${r.reason}`));
  } else {
    const ok = (code, yes) => checks.push(h('li', { 'data-check': code },
      r.failures.includes(code) ? `\u2717 ${failureWords(code)}` : `\u2714 ${yes}`));
    ok('settlement_digest', _('content digest recomputed here from the embedded settlement: {digest}', { digest: r.settlementDigest }));
    ok('settlement_id', _('settlement id recomputed here: {id}', { id: r.settlementId }));
    if (!keys) {
      checks.push(h('li', { 'data-check': 'signature' }, '\u2013 ', r.algorithm === 'SIGNATURE_ALGORITHM_ED25519'
        ? _('signature NOT checked: no key set (signed with key {key})', { key: r.keyId })
        : _('signature NOT checked: the settlement is unsigned and no key set is loaded')));
    } else {
      const sigFail = r.failures.find((f) => f.startsWith('signature'));
      if (sigFail) {
        checks.push(h('li', { 'data-check': 'signature' }, `\u2717 ${failureWords(sigFail)} `,
          r.algorithm === 'SIGNATURE_ALGORITHM_ED25519' ? _('(key {key})', { key: r.keyId })
            : _('(the settlement says: {algorithm})', { algorithm: label(r.algorithm) || _('no signature') })));
      } else {
        checks.push(h('li', { 'data-check': 'signature' }, '\u2714 ',
          _('Ed25519 signature valid under key {key} (fingerprint {fingerprint}), issued {issued} within the key\u2019s window; key set: {source}',
            { key: r.keyId, fingerprint: hand.result.fingerprint, issued: r.issuedAt, source: keys.source() })));
      }
    }
  }
  const verdict = r.verdict === 'valid' ? 'valid' : r.verdict === 'invalid' ? 'invalid' : 'unchecked';
  box.dataset.verdict = verdict;
  const headline = {
    valid: '\u2714 ' + _('VERIFIED: digests and signature valid'),
    invalid: '\u2717 ' + _('NOT VALID: {failures}', { failures: r.failures.join(', ') }),
    unchecked: '\u2013 ' + _('DIGESTS CONSISTENT, SIGNATURE NOT CHECKED: load the published key file'),
  }[verdict];
  box.replaceChildren(h('p', { class: 'verdict-line' }, headline), h('ul', { class: 'checks' }, checks),
    h('p', { class: 'limits' }, _('Not checked here: that the request digest describes the hand as played (compare with the audit log, or `cpsettle replay`), and that the engine still decides the same. A key set embedded in a page is only as trustworthy as the page: compare its fingerprint with the key file the casino publishes.')));
}

// ---------------------------------------------------------------- the page's wiring
let keySet = null; // {keys: Map, source: () => words}
const hands = []; // [{stored, box, where, request, result}]

function verifyAll() {
  return Promise.all(hands.map(showVerdict));
}

function drawHand(hand) {
  hand.where.replaceChildren(hand.box);
  if (hand.broken) return;
  try {
    hand.where.append(...settlementView(unwrap(hand.stored) ?? {}, hand.request));
  } catch (e) {
    hand.where.append(h('p', { class: 'error' }, _('This settlement cannot be drawn: {error}', { error: e.message })));
  }
}

/** Draw one embedded settlement (script element `id`) into `where`, with its verdict box. */
function mountHand(where, id) {
  const box = h('div', { class: 'verdict', role: 'status', 'aria-live': 'polite' });
  const hand = { where, box, stored: null, request: null };
  try {
    hand.stored = embeddedData(id);
  } catch (e) {
    where.replaceChildren(box);
    box.dataset.verdict = 'invalid';
    box.append(h('p', { class: 'verdict-line' }, '\u2717 ', _('NOT VALID: the embedded settlement is not JSON ({error})', { error: e.message })));
    return;
  }
  try {
    hand.request = where.dataset.request ? embeddedData(where.dataset.request) : null;
  } catch (e) {
    hand.request = null;
  }
  hands.push(hand);
  drawHand(hand);
}

/** The words cpsettle wrote into the page (marked data-t, data-money, data-number), again in
 * the current language. */
function relabel(root = document) {
  root.querySelectorAll('[data-t]').forEach((el) => {
    const args = el.dataset.a ? JSON.parse(el.dataset.a) : undefined;
    el.textContent = el.dataset.plural !== undefined
      ? ngettext(el.dataset.t, el.dataset.plural, Number(el.dataset.n), args)
      : (el.dataset.ctx ? pgettext(el.dataset.ctx, el.dataset.t, args) : _(el.dataset.t, args));
  });
  root.querySelectorAll('[data-money]').forEach((el) => {
    el.textContent = money(el.dataset.money, el.dataset.currency, el.dataset.signed === 'true');
  });
  root.querySelectorAll('[data-number]').forEach((el) => {
    el.textContent = number(el.dataset.number, el.dataset.signed === 'true');
  });
  root.querySelectorAll('[data-label]').forEach((el) => {
    el.textContent = label(el.dataset.label);
  });
  const title = document.querySelector('h1');
  if (title) document.title = title.textContent;
}

function keyStatus() {
  const said = document.getElementById('key-status');
  if (!said) return;
  said.textContent = keySet ? keySet.status() : _('No key set loaded: signatures will not be checked.');
}

function setKeys(json, source, status) {
  keySet = { keys: readKeys(json), source, status };
}

function redraw() {
  relabel();
  keyStatus();
  hands.forEach((hand) => {
    drawHand(hand);
    drawVerdict(hand);
  });
}

function wireControls() {
  const deck = document.getElementById('four-colour');
  deck?.addEventListener('change', () => {
    document.body.classList.toggle('four-colour', deck.checked);
  });
  const picker = document.getElementById('language');
  picker?.addEventListener('change', () => {
    setLanguage(picker.value);
    redraw();
  });
  const keyPicker = document.getElementById('key-file');
  const said = document.getElementById('key-status');
  keyPicker?.addEventListener('change', async () => {
    const file = keyPicker.files?.[0];
    if (!file) return;
    try {
      setKeys(JSON.parse(await file.text()), () => _('the file {file}, loaded here', { file: file.name }),
        () => _('Key set loaded from {file}: {keys}', { file: file.name, keys: [...keySet.keys.keys()].join(', ') }));
      keyStatus();
    } catch (e) {
      said.textContent = _('Cannot use {file} as a key set: {error}', { file: file.name, error: e.message });
      return;
    }
    await verifyAll();
  });
  // closed <details> do not print: open them all for printing, and restore afterwards
  let closed = null; // while printing: the details that were closed before
  window.addEventListener('beforeprint', () => {
    if (closed) return;
    closed = [...document.querySelectorAll('details:not([open])')];
    closed.forEach((d) => { d.open = true; });
  });
  window.addEventListener('afterprint', () => {
    closed?.forEach((d) => { d.open = false; });
    closed = null;
  });
}

function fillLanguagePicker() {
  const picker = document.getElementById('language');
  if (!picker) return;
  picker.replaceChildren(...Object.values(I18N.languages).map((l) =>
    h('option', { value: l.code, lang: l.tag }, l.name)));
}

async function start() {
  fillLanguagePicker();
  setLanguage((I18N.fixed && I18N.page) || pickLanguage(navigator.languages ?? [navigator.language])
    || I18N.page || I18N.fallback);
  wireControls();
  relabel();
  keyStatus();
  try {
    const keys = embeddedData('cpsettle-keys');
    if (keys) {
      setKeys(keys, () => _('embedded in this page when it was made'),
        () => _('Key set embedded in this page: {keys}', { keys: [...keySet.keys.keys()].join(', ') }));
      keyStatus();
    }
  } catch (e) {
    document.getElementById('key-status').textContent = _('The embedded key set cannot be used: {error}', { error: e.message });
  }
  document.querySelectorAll('[data-settlement]').forEach((where) => {
    mountHand(where, where.dataset.settlement);
  });
  await verifyAll();
  document.body.dataset.ready = 'true';
}

// the page's formatters, for checks from outside (tests compare them with Babel's); read-only
globalThis.cpsettleView = Object.freeze({
  money, number, label,
  // every sentence of a settlement in a language, as {text, lang} (sentences.js: allSentences)
  sentences: (s, code) => allSentences(s, I18N.languages[code]),
});

start();
