// The hand view: draws a settlement from the JSON embedded in the page and checks its proof
// with the functions of proof.mjs (inlined above this file). A VIEW: it shows what the
// settlement holds and verifies it; it computes nothing that decides money.

// ---------------------------------------------------------------- names for what the JSON holds
// Codes are shown as the settlement spells them; the names below only make them readable. Both
// the string codes ("FRONT") and enum-style names ("ROW_FRONT") are understood.
// (only prefixes no string code starts with: FOUL_PENALTY and NATURAL stay whole)
const PREFIXES = /^(ROW|STATUS|PLAYER_STATUS|HAND_CLASS|PAIR_KIND|ITEM_KIND|LINE_ITEM_KIND|CAP_KIND|FOUL_REASON|NATURAL_KIND)_/;
const NAMES = {
  FRONT: 'Front', MIDDLE: 'Middle', BACK: 'Back',
  REGULAR: 'Regular', FOULED: 'Fouled', NATURAL: 'Natural', SURRENDERED: 'Surrendered',
  ROWS: 'Row by row', FOUL: 'Foul', PAYER_STACK: "payer's stack", PAYEE_STACK: "payee's stack",
  FRONT_ABOVE_MIDDLE: 'the front row beats the middle row',
  MIDDLE_ABOVE_BACK: 'the middle row beats the back row',
};

/** A readable name for a code of the settlement (unknown codes: their words, lower case). */
function label(code) {
  if (!code) return '';
  const bare = String(code).replace(PREFIXES, '');
  if (bare === 'UNSPECIFIED') return '';
  if (NAMES[bare]) return NAMES[bare];
  const words = bare.replace(/_/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const isCode = (value, name) => String(value ?? '').replace(PREFIXES, '') === name;

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

/** An int64 as stored (a decimal string, or a number), with a sign and thin grouping. */
function amount(value, signed = true) {
  const s = String(value ?? '0');
  const negative = s.startsWith('-');
  const digits = s.replace(/^[-+]/, '');
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (negative) return '\u2212' + grouped; // a real minus sign
  return (signed && digits !== '0' ? '+' : '') + grouped;
}

// ---------------------------------------------------------------- cards
const SUITS = {
  s: ['\u2660', 'spades'], h: ['\u2665', 'hearts'], d: ['\u2666', 'diamonds'],
  c: ['\u2663', 'clubs'],
};
const RANKS = {
  A: 'ace', K: 'king', Q: 'queen', J: 'jack', T: 'ten', 10: 'ten', 9: 'nine', 8: 'eight',
  7: 'seven', 6: 'six', 5: 'five', 4: 'four', 3: 'three', 2: 'two',
};

/** One card as the settlement spells it ("Td"): its symbol, its words, its suit's colour. */
function card(spelling) {
  const text = String(spelling);
  if (/^X/i.test(text)) { // a joker (the deck option); what it plays as is said under the row
    return h('span', { class: 'card card-joker', title: 'joker', 'data-card': text },
      h('span', { 'aria-hidden': 'true' }, 'Joker'), h('span', { class: 'sr' }, 'joker'));
  }
  const suit = SUITS[text.slice(-1).toLowerCase()];
  const rank = text.slice(0, -1).toUpperCase();
  if (!suit || !RANKS[rank]) {
    return h('span', { class: 'card card-unknown', title: `card ${text}` }, text);
  }
  const shown = rank === 'T' ? '10' : rank;
  const words = `${RANKS[rank]} of ${suit[1]}`;
  return h('span', { class: `card suit-${text.slice(-1).toLowerCase()}`, title: words,
    'data-card': text },
  h('span', { class: 'rank', 'aria-hidden': 'true' }, shown),
  h('span', { class: 'pip', 'aria-hidden': 'true' }, suit[0]),
  h('span', { class: 'sr' }, words));
}

function cards(list) {
  return h('span', { class: 'cards' }, (list ?? []).map(card));
}

// ---------------------------------------------------------------- the settlement, drawn
function ids(s) {
  const c = s.context ?? {};
  const p = s.profile ?? {};
  const sig = s.signature ?? {};
  const rows = [
    ['Hand', c.handId], ['Table', c.tableId], ['Round', c.roundId], ['Dealer', c.dealerId],
    ['Rules', p.name && `${p.name} version ${p.version ?? '?'} (${p.source ?? '?'})`],
    ['Unit value', s.unitValue !== undefined && amount(s.unitValue, false) + ' minor units' +
      (s.currency ? ` of ${s.currency}` : '')],
    ['Currency', s.currency],
    ['Button seat', s.buttonSeat], ['Button order', (s.order ?? []).join(' \u2192 ')],
    ['Issued at', s.issuedAt], ['Signed', sig.algorithm === 'SIGNATURE_ALGORITHM_ED25519'
      ? `Ed25519, key ${sig.keyId ?? ''}` : 'not signed (' + (sig.algorithm || 'no signature') + ')'],
    ['Settlement id', s.settlementId], ['Settlement digest (stored)', s.settlementDigest],
    ['Request digest', s.requestDigest], ['Profile digest', p.digest],
    ['Engine', s.engineVersion], ['Engine digest', s.engineDigest],
  ];
  return h('dl', { class: 'ids' }, rows.filter(([, v]) => v !== undefined && v !== '' && v !== false)
    .map(([k, v]) => [h('dt', {}, k), h('dd', { class: /digest|id$/i.test(k) ? 'hex' : '' }, v)]));
}

function statusBadges(p) {
  const out = [];
  if (p.fouled || isCode(p.status, 'FOULED')) {
    const why = (p.foulReasons ?? []).map(label).join('; ');
    out.push(h('span', { class: 'badge bad' }, '\u2717 Fouled' + (why ? `: ${why}` : '')));
  }
  if (p.natural || isCode(p.status, 'NATURAL')) {
    out.push(h('span', { class: 'badge good' }, '\u2605 Natural' +
      (p.natural ? `: ${label(p.natural)}` : '')));
  } else if (p.declaredNatural) {
    out.push(h('span', { class: 'badge' }, `Declared natural ${label(p.declaredNatural)} (not granted)`));
  }
  if (p.surrendered || isCode(p.status, 'SURRENDERED')) {
    out.push(h('span', { class: 'badge warn' }, '\u2691 Surrendered'));
  }
  if (p.fantasyland?.qualifies) {
    out.push(h('span', { class: 'badge good' }, `Fantasyland (${p.fantasyland.cards ?? '?'} cards)`));
  }
  if (!out.length && p.status) out.push(h('span', { class: 'badge' }, label(p.status)));
  return out;
}

function player(p) {
  const money = [
    ['Net units', amount(p.netUnits)], ['Before rake', amount(p.moneyBeforeRake)],
    ['Rake', p.rake ? amount(p.rake, false) : '0'],
    ['Stack', p.stack !== undefined ? amount(p.stack, false) : 'no cap'],
  ];
  return h('article', { class: 'player', 'data-player': p.playerId ?? '' },
    h('h3', {}, `${p.playerId ?? '?'} `, h('span', { class: 'seat' }, `seat ${p.seat ?? '?'}`)),
    h('p', { class: 'badges' }, statusBadges(p)),
    (p.rows ?? []).length ? null : h('p', { class: 'note' }, 'No rows in the settlement' +
      (p.natural ? ': a natural is settled on the thirteen cards as dealt.' : '.')),
    h('table', { class: 'rows' },
      h('caption', { class: 'sr' }, `${p.playerId}'s rows`),
      h('tbody', {}, (p.rows ?? []).map((r) => h('tr', { 'data-row': r.row ?? '' },
        h('th', { scope: 'row' }, label(r.row)),
        h('td', {}, cards(r.cards),
          h('div', { class: 'hand-name' }, r.name ?? label(r.handClass),
            r.royalty ? h('span', { class: 'royalty' }, ` \u2014 royalty ${r.royalty}`) : null,
            (r.jokerCards ?? []).length ? ` \u2014 jokers play as ${r.jokerCards.join(' ')}` : null)))))),
    h('p', { class: 'net' }, 'Net ', h('strong', { class: 'money' }, amount(p.netMoney))),
    h('dl', { class: 'money-list' }, money.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    p.fantasyland?.text ? h('p', { class: 'note' }, p.fantasyland.text) : null,
    p.text ? h('p', { class: 'sentence' }, p.text) : null);
}

function side(pairRow, who, hand) {
  const won = pairRow.winner && pairRow.winner === who;
  return h('td', { class: won ? 'win' : '', 'data-side': who },
    won ? h('span', { class: 'winmark' }, '\u2714 wins ') : null,
    cards(hand?.cards), h('div', { class: 'hand-name' }, hand?.name ?? ''));
}

function pair(pr) {
  const a = pr.first ?? '?';
  const b = pr.second ?? '?';
  const rows = (pr.rows ?? []).map((r) => h('tr', { 'data-row': r.row ?? '' },
    h('th', { scope: 'row' }, label(r.row)),
    side(r, a, r.first), side(r, b, r.second),
    h('td', { class: 'num' }, amount(r.units)),
    h('td', { class: 'sentence' }, r.winner ? '' : 'tie \u2014 ', r.text ?? '')));
  const items = (pr.items ?? []).map((it) => h('li', {},
    h('span', { class: 'item-kind' }, label(it.kind)), ` ${amount(it.units)} units: `,
    it.text ?? ''));
  return h('details', { class: 'pair', open: true, 'data-pair': `${a}-${b}` },
    h('summary', {}, h('strong', {}, `${a} v ${b}`), ` (${label(pr.kind)}) \u2014 `,
      pr.text ?? ''),
    rows.length ? h('div', { class: 'scroll' }, h('table', { class: 'pair-rows' },
      h('caption', { class: 'sr' }, `${a} against ${b}, row by row; units from ${a}'s side`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Row'),
        h('th', { scope: 'col' }, a), h('th', { scope: 'col' }, b),
        h('th', { scope: 'col', class: 'num' }, `Units (${a})`),
        h('th', { scope: 'col' }, 'Why'))),
      h('tbody', {}, rows))) : null,
    items.length ? h('ul', { class: 'items' }, items) : null,
    h('p', { class: 'pair-total' }, `Units for ${a}: ${amount(pr.units)}`));
}

function payments(s) {
  const rows = (s.pairs ?? []).filter((pr) => pr.payer || pr.owed || pr.paid).map((pr) =>
    h('tr', {}, h('td', {}, pr.payer ?? ''), h('td', {}, pr.payee ?? ''),
      h('td', { class: 'num' }, amount(pr.owed, false)),
      h('td', {}, pr.cap ? `capped by the ${label(pr.cap)}` : ''),
      h('td', { class: 'num' }, amount(pr.paid, false))));
  return h('section', { class: 'payments' },
    h('h2', {}, 'Payments, in button order'),
    rows.length ? h('div', { class: 'scroll' }, h('table', {},
      h('thead', {}, h('tr', {}, ['Payer', 'Payee', 'Owed', 'Cap', 'Paid'].map((t) =>
        h('th', { scope: 'col', class: /Owed|Paid/.test(t) ? 'num' : '' }, t)))),
      h('tbody', {}, rows))) : h('p', {}, 'No money changes hands.'),
    h('p', {}, 'Rake: ', h('strong', {}, amount(s.rake ?? '0', false)), ' minor units'),
    (s.text ?? []).length ? h('ul', { class: 'totals' }, s.text.map((t) => h('li', {}, t))) : null);
}

/** The whole settlement as elements (used by the hand page and by each hand of the report). */
function settlementView(s) {
  const players = s.players ?? [];
  const c = s.context ?? {};
  const where = [['hand', c.handId], ['table', c.tableId], ['round', c.roundId],
    ['dealer', c.dealerId], ['rules', s.profile?.name], ['unit', s.unitValue]]
    .filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(' \u00b7 ');
  return [
    h('p', { class: 'where' }, where),
    h('section', {}, h('h2', {}, 'Players, in button order'),
      h('div', { class: 'players' }, players.map(player))),
    h('section', {}, h('h2', {}, 'Each pair'), (s.pairs ?? []).map(pair)),
    payments(s),
    h('section', { class: 'context' }, h('h2', {}, 'Audit context and ids'), ids(s)),
  ];
}

// ---------------------------------------------------------------- verification, said plainly
const FAILURE_WORDS = {
  file: 'the embedded data is not a settlement',
  settlement_id: 'the settlement id does not follow from the request, profile and engine digests',
  settlement_digest: 'the settlement digest recomputed in this browser does not match the stored one: the content was changed',
  signature: 'the signature is not valid for this content',
  'signature.key_id': 'the key that signed it is not in the key set',
  'signature.key_window': 'the key was not in service at the time of issue',
};

async function fingerprint(publicKey) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', publicKey));
  return toHex(d).slice(0, 16);
}

/** Verify one stored settlement and write the verdict into `box`. */
async function showVerdict(box, stored, keySet) {
  box.replaceChildren(h('p', { class: 'verdict-line' }, 'Checking\u2026'));
  box.dataset.verdict = 'checking';
  if (!globalThis.crypto?.subtle) {
    box.dataset.verdict = 'unchecked';
    box.replaceChildren(h('p', { class: 'verdict-line' }, '? NOT CHECKED: this browser offers no ' +
      'WebCrypto here (open the page from a file or over https).'));
    return;
  }
  let r;
  try {
    r = await verifySettlement(stored, keySet?.keys ?? null);
  } catch (e) {
    box.dataset.verdict = 'unchecked';
    box.replaceChildren(h('p', { class: 'verdict-line' }, '? NOT CHECKED: ' +
      `this browser could not verify (${e.name}: ${e.message}); it may lack Ed25519 in WebCrypto.`));
    return;
  }
  const checks = [];
  if (r.failures.includes('file')) {
    checks.push(h('li', {}, `\u2717 ${FAILURE_WORDS.file}: ${r.reason}`));
  } else {
    const ok = (code, yes) => checks.push(h('li', { 'data-check': code },
      r.failures.includes(code) ? `\u2717 ${FAILURE_WORDS[code]}` : `\u2714 ${yes}`));
    ok('settlement_digest', `content digest recomputed here from the embedded settlement: ${r.settlementDigest}`);
    ok('settlement_id', `settlement id recomputed here: ${r.settlementId}`);
    if (!keySet) {
      checks.push(h('li', { 'data-check': 'signature' }, r.algorithm === 'SIGNATURE_ALGORITHM_ED25519'
        ? `\u2013 signature NOT checked: no key set (signed with key ${r.keyId})`
        : '\u2013 signature NOT checked: the settlement is unsigned and no key set is loaded'));
    } else {
      const sigFail = r.failures.find((f) => f.startsWith('signature'));
      if (sigFail) {
        checks.push(h('li', { 'data-check': 'signature' }, `\u2717 ${FAILURE_WORDS[sigFail]}` +
          (r.algorithm === 'SIGNATURE_ALGORITHM_ED25519' ? ` (key ${r.keyId})` : ` (the settlement says ${r.algorithm || 'nothing'})`)));
      } else {
        const k = keySet.keys.get(r.keyId);
        checks.push(h('li', { 'data-check': 'signature' },
          `\u2714 Ed25519 signature valid under key ${r.keyId} (fingerprint ${await fingerprint(k.publicKey)}), ` +
          `issued ${r.issuedAt} within the key's window; key set: ${keySet.source}`));
      }
    }
  }
  const verdict = r.verdict === 'valid' ? 'valid' : r.verdict === 'invalid' ? 'invalid' : 'unchecked';
  box.dataset.verdict = verdict;
  const headline = {
    valid: '\u2714 VERIFIED: digests and signature valid',
    invalid: '\u2717 NOT VALID: ' + r.failures.map((f) => f).join(', '),
    unchecked: '\u2013 DIGESTS CONSISTENT, SIGNATURE NOT CHECKED: load the published key file',
  }[verdict];
  box.replaceChildren(h('p', { class: 'verdict-line' }, headline), h('ul', { class: 'checks' }, checks),
    h('p', { class: 'limits' }, 'Not checked here: that the request digest describes the hand ' +
      'as played (compare with the audit log, or `cpsettle replay`), and that the engine still ' +
      'decides the same. A key set embedded in a page is only as trustworthy as the page: ' +
      'compare its fingerprint with the key file the casino publishes.'));
}

// ---------------------------------------------------------------- the page's wiring
function embedded(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

let keySet = null; // {keys: Map, source: words}
const hands = []; // [{stored, box}]

function verifyAll() {
  return Promise.all(hands.map(({ stored, box }) => showVerdict(box, stored, keySet)));
}

/** Draw one embedded settlement (script element `id`) into `where`, with its verdict box. */
function mountHand(where, id) {
  let stored;
  const box = h('div', { class: 'verdict', role: 'status', 'aria-live': 'polite' });
  where.append(box);
  try {
    stored = embedded(id);
  } catch (e) {
    box.dataset.verdict = 'invalid';
    box.append(h('p', { class: 'verdict-line' }, `\u2717 NOT VALID: the embedded settlement is not JSON (${e.message})`));
    return;
  }
  hands.push({ stored, box });
  try {
    where.append(...settlementView(unwrap(stored) ?? {}));
  } catch (e) {
    where.append(h('p', { class: 'error' }, `This settlement cannot be drawn: ${e.message}`));
  }
}

function setKeys(json, source) {
  keySet = { keys: readKeys(json), source };
}

function wireControls() {
  const deck = document.getElementById('four-colour');
  deck?.addEventListener('change', () => {
    document.body.classList.toggle('four-colour', deck.checked);
  });
  const picker = document.getElementById('key-file');
  const said = document.getElementById('key-status');
  picker?.addEventListener('change', async () => {
    const file = picker.files?.[0];
    if (!file) return;
    try {
      setKeys(JSON.parse(await file.text()), `the file ${file.name}, loaded here`);
      said.textContent = `Key set loaded from ${file.name}: ${[...keySet.keys.keys()].join(', ')}`;
    } catch (e) {
      said.textContent = `Cannot use ${file.name} as a key set: ${e.message}`;
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

async function start() {
  wireControls();
  const said = document.getElementById('key-status');
  try {
    const keys = embedded('cpsettle-keys');
    if (keys) {
      setKeys(keys, 'embedded in this page when it was made');
      said.textContent = `Key set embedded in this page: ${[...keySet.keys.keys()].join(', ')}`;
    }
  } catch (e) {
    said.textContent = `The embedded key set cannot be used: ${e.message}`;
  }
  document.querySelectorAll('[data-settlement]').forEach((where) => {
    mountHand(where, where.dataset.settlement);
  });
  await verifyAll();
  document.body.dataset.ready = 'true';
}

start();
