// The settlement's sentences in the reader's language, rendered in the browser from the
// settlement's structured fields (the same rendering as cpsettle_client/i18n/sentences.py, with
// the same messages; a test compares the two on every golden case in every language).
//
// A translation is shown only when the same fields say the signed English byte for byte: each
// sentence is rendered in English too (the signed text's conventions: plain integers, minor
// units, hands as lowercase phrases), and where that differs from the signed sentence (a
// settlement from an engine before these fields, or edited by hand: its verdict is red) the
// signed English is shown, marked lang="en". Pure functions of the settlement and a language's
// data (I18N.languages[code]); they use the page's formatters (view.js) under that language.

const JOKER = 'Xj';
const RANK_VALUE = Object.fromEntries([...'23456789TJQKA'].map((r, i) => [r, i + 2]));
const RANK_LETTER = Object.fromEntries(Object.entries(RANK_VALUE).map(([r, v]) => [v, r]));

/** An enum field as its value's name (a number is read through proof.mjs's ENUMS table). */
function enumName(value, type) {
  if (typeof value === 'number') return ENUMS[type]?.[value] ?? String(value);
  return value ?? ENUMS[type]?.[0];
}

/** An int64 (a decimal string or a number) as a BigInt; absent is 0. */
function big(value) {
  return BigInt(value ?? 0);
}

const abs = (x) => (x < 0n ? -x : x);

/** Run `fn` with the page's formatters (number, money, label, messages) in `lang`. */
function inLanguage(lang, fn) {
  const saved = LANG;
  LANG = lang;
  try {
    return fn();
  } finally {
    LANG = saved;
  }
}

/** One language's words for the sentences (see i18n/sentences.py, Say). */
function makeSay(lang, currency) {
  const signed = lang.code === 'en';
  const say = {
    signed,
    _(message, args) {
      const t = lang.messages[message];
      return fillText(typeof t === 'string' ? t : message, args);
    },
    ngettext(singular, plural, count, args) {
      const n = abs(big(count));
      const forms = lang.messages[singular];
      const rule = PLURAL_RULES[lang.code] ?? ((k) => Number(k !== 1));
      const english = n !== 1n ? plural : singular;
      const text = Array.isArray(forms) ? (forms[rule(Number(n))] ?? english) : english;
      return fillText(text, { n: say.num(n), ...args });
    },
    num(value) {
      return signed ? String(big(value)) : number(String(big(value)));
    },
    plus(value) {
      const v = big(value);
      if (signed) return v > 0n ? `+${v}` : String(v);
      return number(String(v), true);
    },
    money(minor, withSign = false) {
      const v = big(minor);
      if (signed) return withSign && v > 0n ? `+${v}` : String(v);
      return money(String(v), currency || 'XXX', withSign);
    },
    join(items) {
      if (signed || items.length < 2) return items.join(', ');
      const p = lang.lists ?? { 2: '{0}, {1}', start: '{0}, {1}', middle: '{0}, {1}', end: '{0}, {1}' };
      const two = (pattern, x, y) => pattern.replace('{0}', () => x).replace('{1}', () => y);
      if (items.length === 2 && p['2']) return two(p['2'], items[0], items[1]);
      let out = two(p.start, items[0], items[1]);
      for (const item of items.slice(2, -1)) out = two(p.middle, out, item);
      return two(p.end, out, items[items.length - 1]);
    },
    label(code) {
      return label(code);
    },
    rank(letter, plural = false) {
      const words = {
        2: [say._('two'), say._('twos')], 3: [say._('three'), say._('threes')],
        4: [say._('four'), say._('fours')], 5: [say._('five'), say._('fives')],
        6: [say._('six'), say._('sixes')], 7: [say._('seven'), say._('sevens')],
        8: [say._('eight'), say._('eights')], 9: [say._('nine'), say._('nines')],
        T: [say._('ten'), say._('tens')], J: [say._('jack'), say._('jacks')],
        Q: [say._('queen'), say._('queens')], K: [say._('king'), say._('kings')],
        A: [say._('ace'), say._('aces')],
      }[letter];
      if (!words) throw new Error(`no rank ${letter}`);
      return words[plural ? 1 : 0];
    },
    row(row) {
      return label(enumName(row, 'Row'));
    },
    reasons(reasons) {
      const words = {
        FOUL_REASON_FRONT_ABOVE_MIDDLE: say._('front above middle'),
        FOUL_REASON_MIDDLE_ABOVE_BACK: say._('middle above back'),
        FOUL_REASON_FALSE_DECLARATION: say._('declared a natural the cards do not make'),
      };
      return say.join((reasons ?? []).map((r) => words[enumName(r, 'FoulReason')]).filter(Boolean));
    },
    jokers(standsFor) {
      return say.join((standsFor ?? []).map((c) => say._('{joker} as {card}', { joker: JOKER, card: c })));
    },
  };
  return say;
}

/** A message's '{name}' fields filled with text (the arguments are already words). */
function fillText(text, args) {
  if (!args) return text;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in args ? String(args[k]) : m));
}

// ---------------------------------------------------------------- hands

function resolvedCards(row) {
  const standsFor = [...(row.jokerCards ?? [])];
  return (row.cards ?? []).map((c) => (String(c).toUpperCase() === JOKER.toUpperCase() && standsFor.length
    ? standsFor.shift() : String(c)));
}

function byCount(cards) {
  const counts = new Map();
  for (const c of cards) {
    const v = RANK_VALUE[c.slice(0, -1).toUpperCase().replace('10', 'T')] ?? 0;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return [...counts.entries()].map(([v, n]) => [n, v])
    .sort((x, y) => (y[0] - x[0]) || (y[1] - x[1]));
}

/** The hand's name from its class and cards, as the engine names it (RULES.md §3). */
function handNameOf(say, row) {
  const ranks = byCount(resolvedCards(row)).map(([, v]) => RANK_LETTER[v] ?? '?');
  let top = ranks[0] ?? '?';
  const cls = enumName(row.handClass, 'HandClass');
  const w = (r, plural) => say.rank(r, plural);
  if ((cls === 'HAND_CLASS_STRAIGHT' || cls === 'HAND_CLASS_STRAIGHT_FLUSH')
      && [...'A2345'].every((r) => ranks.includes(r)) && ranks.length === 5) top = '5';
  let name;
  if (cls === 'HAND_CLASS_HIGH_CARD') name = say._('High card, {rank}', { rank: w(top) });
  else if (cls === 'HAND_CLASS_PAIR') {
    name = say._('Pair of {ranks}, {kicker} kicker', { ranks: w(top, true), kicker: w(ranks[1] ?? '?') });
  } else if (cls === 'HAND_CLASS_TWO_PAIR') {
    name = say._('Two pair, {high} and {low}', { high: w(top, true), low: w(ranks[1], true) });
  } else if (cls === 'HAND_CLASS_THREE_OF_A_KIND') {
    name = say._('Three of a kind, {ranks}', { ranks: w(top, true) });
  } else if (cls === 'HAND_CLASS_STRAIGHT') name = say._('Straight, {rank} high', { rank: w(top) });
  else if (cls === 'HAND_CLASS_FLUSH') name = say._('{rank}-high flush', { rank: w(top) });
  else if (cls === 'HAND_CLASS_FULL_HOUSE') {
    name = say._('Full house, {ranks} full of {other}', { ranks: w(top, true), other: w(ranks[1], true) });
  } else if (cls === 'HAND_CLASS_FOUR_OF_A_KIND') {
    name = say._('Four of a kind, {ranks}', { ranks: w(top, true) });
  } else if (cls === 'HAND_CLASS_STRAIGHT_FLUSH') {
    name = say._('Straight flush, {rank} high', { rank: w(top) });
  } else if (cls === 'HAND_CLASS_ROYAL_FLUSH') name = say._('Royal flush');
  else if (cls === 'HAND_CLASS_FIVE_OF_A_KIND') {
    name = say._('Five of a kind, {ranks}', { ranks: w(top, true) });
  } else throw new Error(`no hand class ${cls}`);
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function phrase(say, row, jokers = true) {
  if (!row) throw new Error('no row');
  let name = handNameOf(say, row);
  if (say.signed) name = name.charAt(0).toLowerCase() + name.slice(1);
  if (jokers && (row.jokerCards ?? []).length) name += ` (${say.jokers(row.jokerCards)})`;
  return name;
}

const clause = (say, text) => (say.signed && text.includes(',') ? `${text},` : text);

// ---------------------------------------------------------------- the settlement

function facts(s) {
  const players = new Map((s.players ?? []).map((p) => [p.playerId ?? '', p]));
  const player = (pid) => {
    const p = players.get(pid);
    if (!p) throw new Error(`no player ${pid}`);
    return p;
  };
  return {
    s,
    player,
    natural(say, pid, jokers = true) {
      const p = player(pid);
      let name = say.label(p.natural);
      if (say.signed) name = name.charAt(0).toLowerCase() + name.slice(1);
      if (jokers && (p.naturalJokerCards ?? []).length) name += ` (${say.jokers(p.naturalJokerCards)})`;
      return name;
    },
  };
}

function fouledOf(f, pr) {
  if (f.player(pr.first).fouled) return [pr.first, pr.second];
  if (f.player(pr.second).fouled) return [pr.second, pr.first];
  throw new Error('no fouled player');
}

function scooperOf(f, pr) {
  const winners = new Set((pr.rows ?? []).map((r) => r.winner ?? ''));
  if ((pr.rows ?? []).length && winners.size === 1 && !winners.has('')) return [...winners][0];
  return fouledOf(f, pr)[1];
}

function rowSentence(say, f, pr, r) {
  const a = pr.first ?? '';
  const b = pr.second ?? '';
  const row = say.row(r.row);
  const first = r.first;
  const second = r.second;
  if (!r.winner) {
    return say._("{row}: {first}'s {first_hand} ties {second}'s {second_hand} \u2014 push",
      { row, first: a, second: b, first_hand: clause(say, phrase(say, first)), second_hand: phrase(say, second) });
  }
  const winner = r.winner;
  const loser = winner === a ? b : a;
  const [won, lost] = winner === a ? [first, second] : [second, first];
  const units = say.num(abs(big(r.units)));
  if (enumName(pr.kind, 'PairKind') === 'PAIR_KIND_FOUL') {
    if (!won) {
      return say._("{row}: {winner}'s hand wins against {loser}'s fouled hand \u2014 {winner} +{units}",
        { row, winner, loser, units });
    }
    return say._("{row}: {winner}'s {hand} wins against {loser}'s fouled hand \u2014 {winner} +{units}",
      { row, winner, loser, hand: phrase(say, won), units });
  }
  const args = { row, winner, loser, winner_hand: clause(say, phrase(say, won)), loser_hand: phrase(say, lost), units };
  const ties = r.tieBreakCards ?? [];
  if (ties.length === 2) {
    const [wc, lc] = winner === a ? ties : [ties[1], ties[0]];
    return say._("{row}: {winner}'s {winner_hand} beats {loser}'s {loser_hand} (equal by rank; highest card {winner_card} against {loser_card}) \u2014 {winner} +{units}",
      { ...args, winner_card: wc, loser_card: lc });
  }
  return say._("{row}: {winner}'s {winner_hand} beats {loser}'s {loser_hand} \u2014 {winner} +{units}", args);
}

function itemSentence(say, f, pr, item) {
  const a = pr.first ?? '';
  const b = pr.second ?? '';
  const u = big(item.units);
  const units = say.num(abs(u));
  const [w, o] = u > 0n ? [a, b] : [b, a];
  const kind = enumName(item.kind, 'LineItemKind');
  const rows = pr.rows ?? [];
  if (kind === 'LINE_ITEM_KIND_MAJORITY_BONUS') {
    const won = rows.filter((r) => r.winner === w).length;
    const lost = rows.filter((r) => r.winner === o).length;
    return say.ngettext('Majority bonus: {player} won {n} rows to {lost} \u2014 {player} +{units}',
      'Majority bonus: {player} won {n} rows to {lost} \u2014 {player} +{units}', won,
      { player: w, lost: say.num(lost), units });
  }
  if (kind === 'LINE_ITEM_KIND_SCOOP_BONUS') {
    return say._('Scoop bonus: {player} won all three rows \u2014 {player} +{units}', { player: w, units });
  }
  if (kind === 'LINE_ITEM_KIND_ROYALTIES') {
    if (!rows.length) {
      const [fouled, other] = fouledOf(f, pr);
      return say._("Royalties: {fouled} also pays {other}'s royalties of {units} \u2014 {other} +{units}",
        { fouled, other, units });
    }
    const args = { first: a, second: b, first_royalties: say.num(f.player(a).royaltyTotal ?? 0),
      second_royalties: say.num(f.player(b).royaltyTotal ?? 0) };
    if (u === 0n) {
      return say._('Royalties: {first} {first_royalties}, {second} {second_royalties} \u2014 even', args);
    }
    return say._('Royalties: {first} {first_royalties}, {second} {second_royalties} \u2014 {player} +{units}',
      { ...args, player: w, units });
  }
  if (kind === 'LINE_ITEM_KIND_FOUL_PENALTY') {
    const [fouled, other] = fouledOf(f, pr);
    const reasons = say.reasons(f.player(fouled).foulReasons);
    if (rows.length) {
      return say._("Foul: {fouled}'s hand is fouled ({reasons}), so it loses every row", { fouled, reasons });
    }
    return say._("Foul: {fouled}'s hand is fouled ({reasons}); he pays {other} the fixed penalty \u2014 {other} +{units}",
      { fouled, other, reasons, units });
  }
  if (kind === 'LINE_ITEM_KIND_NATURAL') return naturalSentence(say, f, pr, item, units);
  if (kind === 'LINE_ITEM_KIND_SURRENDER') {
    const s = f.player(a).surrendered ? a : b;
    return say._('Surrender: {player} surrendered and pays {other} {units} \u2014 {other} +{units}',
      { player: s, other: s === a ? b : a, units });
  }
  if (kind === 'LINE_ITEM_KIND_SCOOP_MULTIPLIER' || kind === 'LINE_ITEM_KIND_HOME_RUN_MULTIPLIER') {
    const m = BigInt(item.multiplier ?? 0);
    if (m < 2n) throw new Error('no multiplier');
    const before = abs(u) / (m - 1n);
    const args = { multiplier: say.num(m), player: scooperOf(f, pr), before: say.num(before), after: say.num(before * m) };
    if (kind === 'LINE_ITEM_KIND_SCOOP_MULTIPLIER') {
      return say._('Scoop \u00d7{multiplier}: {player} scooped \u2014 +{before} becomes +{after} for {player}', args);
    }
    return say._('Home run \u00d7{multiplier}: {player} scooped every opponent \u2014 +{before} becomes +{after} for {player}', args);
  }
  if (kind === 'LINE_ITEM_KIND_NO_SCORE') {
    const pa = f.player(a);
    const pb = f.player(b);
    if (pa.surrendered && pb.surrendered) {
      return say._('Both {first} and {second} surrendered \u2014 0', { first: a, second: b });
    }
    if (pa.surrendered || pb.surrendered) {
      const s = pa.surrendered ? a : b;
      return say._("Surrender: {player} surrendered, but {other}'s fouled hand collects nothing \u2014 0",
        { player: s, other: s === a ? b : a });
    }
    if (pa.natural && pb.natural) {
      const args = { first: a, second: b, first_natural: f.natural(say, a), second_natural: f.natural(say, b) };
      if (item.cardsCompared !== undefined) {
        return say._("Natural: {first}'s {first_natural} and {second}'s {second_natural} and their cards rank the same \u2014 0", args);
      }
      return say._("Natural: {first}'s {first_natural} and {second}'s {second_natural} rank equal \u2014 0", args);
    }
    return say._('Both {first} and {second} fouled \u2014 they settle 0', { first: a, second: b });
  }
  throw new Error(`no line kind ${kind}`);
}

function naturalSentence(say, f, pr, item, units) {
  const a = pr.first ?? '';
  const b = pr.second ?? '';
  const pa = f.player(a);
  const pb = f.player(b);
  const c = item.cardsCompared;
  if (pa.natural && pb.natural) {
    let firstWins;
    if (c !== undefined) firstWins = RANK_VALUE[c.firstRank] > RANK_VALUE[c.secondRank];
    else firstWins = Number(pa.naturalRank ?? 0) > Number(pb.naturalRank ?? 0);
    const [w, o] = firstWins ? [a, b] : [b, a];
    const args = { winner: w, loser: o, winner_natural: f.natural(say, w), loser_natural: f.natural(say, o), units };
    if (c !== undefined) {
      const [wr, lr] = w === a ? [c.firstRank, c.secondRank] : [c.secondRank, c.firstRank];
      return say._("Natural: {winner}'s {winner_natural} and {loser}'s {loser_natural} rank equal; compared from the top, card {card} is {winner_rank} against {loser_rank} \u2014 {winner} +{units}",
        { ...args, card: say.num(c.card ?? 0), winner_rank: say.rank(wr), loser_rank: say.rank(lr) });
    }
    return say._("Natural: {winner}'s {winner_natural} outranks {loser}'s {loser_natural} \u2014 {winner} +{units}", args);
  }
  const [w, o] = pa.natural ? [a, b] : [b, a];
  const pw = f.player(w);
  const po = f.player(o);
  if (po.fouled) {
    const args = { player: w, natural: f.natural(say, w), other: o, reasons: say.reasons(po.foulReasons), units };
    if (abs(big(item.units)) === big(pw.naturalUnits)) {
      return say._("Natural: {player}'s {natural} against {other}'s fouled hand ({reasons}); {other} pays the natural's {units} \u2014 {player} +{units}", args);
    }
    return say._("Natural: {player}'s {natural} against {other}'s fouled hand ({reasons}); {other} pays the foul penalty of {units}, more than the natural's {natural_units} \u2014 {player} +{units}",
      { ...args, natural_units: say.num(pw.naturalUnits) });
  }
  return say._("Natural: {player}'s {natural} wins automatically against {other} \u2014 {player} +{units}",
    { player: w, natural: f.natural(say, w), other: o, units });
}

function pairSentence(say, f, pr) {
  if (big(pr.units) === 0n) return say._('{first} and {second} settle 0', { first: pr.first ?? '', second: pr.second ?? '' });
  const args = { payer: pr.payer ?? '', payee: pr.payee ?? '', owed: say.money(pr.owed), paid: say.money(pr.paid) };
  const cap = enumName(pr.cap, 'Cap');
  if (cap === 'CAP_UNSPECIFIED') {
    return say.ngettext('{payer} owes {payee} {n} units = {owed}; {payer} pays {paid}',
      '{payer} owes {payee} {n} units = {owed}; {payer} pays {paid}', pr.units, args);
  }
  if (cap === 'CAP_PAYER_STACK') {
    return say.ngettext("{payer} owes {payee} {n} units = {owed}; capped by {payer}'s stack: {payer} pays {paid}",
      "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s stack: {payer} pays {paid}", pr.units, args);
  }
  if (cap === 'CAP_PAYEE_STACK') {
    return say.ngettext("{payer} owes {payee} {n} units = {owed}; capped by {payee}'s stack: {payer} pays {paid}",
      "{payer} owes {payee} {n} units = {owed}; capped by {payee}'s stack: {payer} pays {paid}", pr.units, args);
  }
  return say.ngettext("{payer} owes {payee} {n} units = {owed}; capped by {payer}'s and {payee}'s stacks: {payer} pays {paid}",
    "{payer} owes {payee} {n} units = {owed}; capped by {payer}'s and {payee}'s stacks: {payer} pays {paid}", pr.units, args);
}

function playerSentence(say, f, p) {
  let text = say.ngettext('{player}: {units} units, {money} after caps',
    '{player}: {units} units, {money} after caps', p.netUnits,
    { player: p.playerId ?? '', units: say.plus(p.netUnits), money: say.money(p.netMoney, true) });
  if (big(p.rake) !== 0n) text = say._('{text} and {rake} rake', { text, rake: say.money(p.rake) });
  if (p.fouled) return say._('{text}; fouled ({reasons})', { text, reasons: say.reasons(p.foulReasons) });
  if (p.natural) return say._('{text}; natural: {natural}', { text, natural: f.natural(say, p.playerId ?? '', false) });
  if (p.surrendered) return say._('{text}; surrendered', { text });
  return text;
}

function fantasylandSentence(say, pid, status, rows, fl) {
  const st = enumName(status, 'PlayerStatus');
  if (st === 'PLAYER_STATUS_FOULED') return say._('{player} does not qualify for Fantasyland (fouled hand)', { player: pid });
  if (st === 'PLAYER_STATUS_NATURAL') return say._('{player} does not qualify for Fantasyland (natural hand)', { player: pid });
  if (st === 'PLAYER_STATUS_SURRENDERED') return say._('{player} does not qualify for Fantasyland (surrendered hand)', { player: pid });
  const byRow = new Map((rows ?? []).map((r) => [enumName(r.row, 'Row'), r]));
  const cards = fl.cards ?? 0;
  if (fl.inFantasyland) {
    if (!fl.qualifies) return say._('{player} leaves Fantasyland: no stay condition met', { player: pid });
    const row = enumName(fl.row, 'Row');
    const hand = phrase(say, byRow.get(row), false);
    if (row === 'ROW_FRONT') {
      return say.ngettext('{player} stays in Fantasyland with {hand} in the front \u2014 {n} cards next hand',
        '{player} stays in Fantasyland with {hand} in the front \u2014 {n} cards next hand', cards, { player: pid, hand });
    }
    if (row === 'ROW_MIDDLE') {
      return say.ngettext('{player} stays in Fantasyland with {hand} in the middle \u2014 {n} cards next hand',
        '{player} stays in Fantasyland with {hand} in the middle \u2014 {n} cards next hand', cards, { player: pid, hand });
    }
    if (row === 'ROW_BACK') {
      return say.ngettext('{player} stays in Fantasyland with {hand} in the back \u2014 {n} cards next hand',
        '{player} stays in Fantasyland with {hand} in the back \u2014 {n} cards next hand', cards, { player: pid, hand });
    }
    throw new Error(`no stay row ${row}`);
  }
  const front = phrase(say, byRow.get('ROW_FRONT'), false);
  if (fl.qualifies) {
    return say.ngettext('{player} qualifies for Fantasyland with {hand} in front \u2014 {n} cards',
      '{player} qualifies for Fantasyland with {hand} in front \u2014 {n} cards', cards, { player: pid, hand: front });
  }
  return say._('{player} does not qualify for Fantasyland ({hand} in front)', { player: pid, hand: front });
}

function rakeSentence(say, rake) {
  return say._('Rake: {rake} to the house', { rake: say.money(rake) });
}

// ---------------------------------------------------------------- shown

/** The sentences of settlement `s` in language `lang` (I18N.languages[code]): each a function
 * returning {text, lang}: the translation when the fields say the signed English exactly, else
 * the signed English. */
function sentencesOf(s, lang) {
  const f = facts(s);
  const english = I18N.languages.en ?? lang;
  const shown = (signed, render) => {
    const text = signed ?? '';
    if (!lang || lang.code === 'en') return { text, lang: 'en' };
    try {
      if (inLanguage(english, () => render(makeSay(english, s.currency))) !== text) return { text, lang: 'en' };
      return { text: inLanguage(lang, () => render(makeSay(lang, s.currency))), lang: lang.tag };
    } catch (e) {
      return { text, lang: 'en' };
    }
  };
  return {
    row: (pr, r) => shown(r.text, (say) => rowSentence(say, f, pr, r)),
    item: (pr, item) => shown(item.text, (say) => itemSentence(say, f, pr, item)),
    pair: (pr) => shown(pr.text, (say) => pairSentence(say, f, pr)),
    player: (p) => shown(p.text, (say) => playerSentence(say, f, p)),
    fantasyland: (p) => shown(p.fantasyland?.text, (say) => fantasylandSentence(say, p.playerId ?? '', p.status, p.rows, p.fantasyland ?? {})),
    totals: () => (s.text ?? []).map((t, i) => (i < (s.players ?? []).length
      ? shown(t, (say) => playerSentence(say, f, s.players[i]))
      : shown(t, (say) => rakeSentence(say, s.rake)))),
    handName: (row) => shown(row.name, (say) => handNameOf(say, row)),
  };
}

/** Every sentence of `s` in `lang`, in the order of i18n/sentences.py's `all_sentences`:
 * pairs (rows, items, money line), players (their hands' names, their sentence, Fantasyland),
 * totals. For the tests. */
function allSentences(s, lang) {
  const said = sentencesOf(s, lang);
  const out = [];
  for (const pr of s.pairs ?? []) {
    for (const r of pr.rows ?? []) out.push(said.row(pr, r));
    for (const it of pr.items ?? []) out.push(said.item(pr, it));
    out.push(said.pair(pr));
  }
  for (const p of s.players ?? []) {
    for (const r of p.rows ?? []) out.push(said.handName(r));
    out.push(said.player(p));
    if (p.fantasyland) out.push(said.fantasyland(p));
  }
  out.push(...said.totals());
  return out;
}
