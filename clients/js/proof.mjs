// The checks of docs/AUDIT.md ("Verifying a settlement", "The canonical content bytes", the
// appendix), written from that page, not from the service's code. Runs unchanged in Node 20+ and
// in a browser: Uint8Array and TextEncoder for the bytes, WebCrypto (crypto.subtle) for SHA-256
// and Ed25519. verify.mjs (the command line) and the HTML views of the Python client (which
// inline this file, `export` removed) are its two users, so the vectors that test one test both.

// The appendix of docs/AUDIT.md: [number, JSON name, kind, sub-message type].
export const SCHEMA = {
  Settlement: [
    [1, 'context', 'message', 'AuditContext'], [2, 'profile', 'message', 'ProfileRef'],
    [3, 'unitValue', 'int64'], [4, 'buttonSeat', 'int32'], [5, 'order', 'repeated string'],
    [6, 'players', 'repeated message', 'PlayerResult'],
    [7, 'pairs', 'repeated message', 'PairResult'], [8, 'rake', 'int64'],
    [9, 'text', 'repeated string'], [10, 'settlementId', 'string'],
    [11, 'requestDigest', 'string'], [12, 'engineVersion', 'string'],
    [13, 'engineDigest', 'string'], [14, 'settlementDigest', 'string'],
    [15, 'issuedAt', 'timestamp'], [16, 'signature', 'message', 'Signature'],
    [17, 'currency', 'string'],
  ],
  AuditContext: [[1, 'handId', 'string'], [2, 'tableId', 'string'], [3, 'roundId', 'string'],
    [4, 'dealerId', 'string']],
  ProfileRef: [[1, 'name', 'string'], [2, 'version', 'string'], [3, 'digest', 'string'],
    [4, 'source', 'string']],
  PlayerResult: [
    [1, 'playerId', 'string'], [2, 'seat', 'int32'], [3, 'status', 'enum', 'PlayerStatus'],
    [4, 'rows', 'repeated message', 'EvaluatedRow'], [5, 'royaltyTotal', 'int32'],
    [6, 'fouled', 'bool'], [7, 'foulReasons', 'repeated enum', 'FoulReason'],
    [8, 'natural', 'string'],
    [9, 'declaredNatural', 'string'], [10, 'surrendered', 'bool'],
    [11, 'stack', 'optional int64'], [12, 'netUnits', 'int64'],
    [13, 'moneyBeforeRake', 'int64'], [14, 'rake', 'int64'], [15, 'netMoney', 'int64'],
    [16, 'fantasyland', 'message', 'FantasylandResult'], [17, 'text', 'string'],
    [18, 'naturalJokerCards', 'repeated string'], [19, 'naturalUnits', 'int64'],
    [20, 'naturalRank', 'int32'],
  ],
  EvaluatedRow: [[1, 'row', 'enum', 'Row'], [2, 'cards', 'repeated string'],
    [3, 'handClass', 'enum', 'HandClass'], [4, 'name', 'string'], [5, 'royalty', 'int32'],
    [6, 'jokerCards', 'repeated string']],
  FantasylandResult: [[1, 'qualifies', 'bool'], [2, 'cards', 'int32'], [3, 'text', 'string'],
    [4, 'inFantasyland', 'bool'], [5, 'row', 'enum', 'Row']],
  PairResult: [
    [1, 'first', 'string'], [2, 'second', 'string'], [3, 'kind', 'enum', 'PairKind'],
    [4, 'rows', 'repeated message', 'RowResult'], [5, 'items', 'repeated message', 'LineItem'],
    [6, 'units', 'int64'], [7, 'owed', 'int64'], [8, 'paid', 'int64'], [9, 'payer', 'string'],
    [10, 'payee', 'string'], [11, 'cap', 'enum', 'Cap'], [12, 'text', 'string'],
  ],
  RowResult: [[1, 'row', 'enum', 'Row'], [2, 'first', 'message', 'EvaluatedRow'],
    [3, 'second', 'message', 'EvaluatedRow'], [4, 'winner', 'string'], [5, 'units', 'int64'],
    [6, 'text', 'string'], [7, 'tieBreakCards', 'repeated string']],
  LineItem: [[1, 'kind', 'enum', 'LineItemKind'], [2, 'units', 'int64'], [3, 'text', 'string'],
    [4, 'multiplier', 'int32'], [5, 'cardsCompared', 'message', 'CardComparison']],
  CardComparison: [[1, 'card', 'int32'], [2, 'firstRank', 'string'], [3, 'secondRank', 'string']],
  Signature: [[1, 'algorithm', 'enum', 'SignatureAlgorithm'], [2, 'keyId', 'string'],
    [3, 'value', 'string']],
};

// The appendix's enum table: each enum's value names, by number (index 0: ..._UNSPECIFIED).
export const ENUMS = {
  Cap: ['CAP_UNSPECIFIED', 'CAP_PAYER_STACK', 'CAP_PAYEE_STACK', 'CAP_BOTH_STACKS'],
  FoulReason: ['FOUL_REASON_UNSPECIFIED', 'FOUL_REASON_FRONT_ABOVE_MIDDLE',
    'FOUL_REASON_MIDDLE_ABOVE_BACK', 'FOUL_REASON_FALSE_DECLARATION'],
  HandClass: ['HAND_CLASS_UNSPECIFIED', 'HAND_CLASS_HIGH_CARD', 'HAND_CLASS_PAIR',
    'HAND_CLASS_TWO_PAIR', 'HAND_CLASS_THREE_OF_A_KIND', 'HAND_CLASS_STRAIGHT',
    'HAND_CLASS_FLUSH', 'HAND_CLASS_FULL_HOUSE', 'HAND_CLASS_FOUR_OF_A_KIND',
    'HAND_CLASS_STRAIGHT_FLUSH', 'HAND_CLASS_ROYAL_FLUSH', 'HAND_CLASS_FIVE_OF_A_KIND'],
  LineItemKind: ['LINE_ITEM_KIND_UNSPECIFIED', 'LINE_ITEM_KIND_ROW',
    'LINE_ITEM_KIND_MAJORITY_BONUS', 'LINE_ITEM_KIND_SCOOP_BONUS', 'LINE_ITEM_KIND_ROYALTIES',
    'LINE_ITEM_KIND_FOUL_PENALTY', 'LINE_ITEM_KIND_NATURAL', 'LINE_ITEM_KIND_SURRENDER',
    'LINE_ITEM_KIND_SCOOP_MULTIPLIER', 'LINE_ITEM_KIND_HOME_RUN_MULTIPLIER',
    'LINE_ITEM_KIND_NO_SCORE'],
  PairKind: ['PAIR_KIND_UNSPECIFIED', 'PAIR_KIND_ROWS', 'PAIR_KIND_FOUL', 'PAIR_KIND_NATURAL',
    'PAIR_KIND_SURRENDER', 'PAIR_KIND_NONE'],
  PlayerStatus: ['PLAYER_STATUS_UNSPECIFIED', 'PLAYER_STATUS_REGULAR', 'PLAYER_STATUS_FOULED',
    'PLAYER_STATUS_NATURAL', 'PLAYER_STATUS_SURRENDERED'],
  Row: ['ROW_UNSPECIFIED', 'ROW_FRONT', 'ROW_MIDDLE', 'ROW_BACK'],
  SignatureAlgorithm: ['SIGNATURE_ALGORITHM_UNSPECIFIED', 'SIGNATURE_ALGORITHM_NONE',
    'SIGNATURE_ALGORITHM_ED25519'],
};

const OUTSIDE_CONTENT = new Set([14, 15, 16]); // Settlement: settlementDigest, issuedAt, signature
const RANGE = { int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n] };
const UTF8 = new TextEncoder();

/** Not a Settlement (failure code "file"). */
export class NotASettlement extends Error {}

const snake = (name) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function varint(n) {
  let v = BigInt(n);
  if (v < 0n) v += 2n ** 64n;
  const out = [];
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

const key = (number, wireType) => varint(number * 8 + wireType);

function lengthDelimited(number, bytes) {
  return concat([key(number, 2), varint(bytes.length), bytes]);
}

function integer(value, kind, where) {
  const base = kind.replace('optional ', '');
  let v;
  if (typeof value === 'number' && Number.isInteger(value)) v = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) v = BigInt(value);
  else throw new NotASettlement(`${where}: ${JSON.stringify(value)} is not an integer`);
  const [lo, hi] = RANGE[base];
  if (v < lo || v > hi) throw new NotASettlement(`${where}: out of ${base} range`);
  return v;
}

/** An enum value from JSON: its name in the enum table, or its number. */
function enumValue(value, type, where) {
  const names = ENUMS[type];
  if (typeof value === 'string' && names.includes(value)) return names.indexOf(value);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 2 ** 31) {
    return value;
  }
  throw new NotASettlement(`${where}: ${JSON.stringify(value)} is not a ${type}`);
}

function text(value, where) {
  if (typeof value !== 'string') throw new NotASettlement(`${where}: not a string`);
  return UTF8.encode(value);
}

const TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z$/;

/**
 * The signed text of a time in JSON (docs/AUDIT.md, `issuedAt`): RFC 3339 in UTC, fraction
 * padded to exactly three digits; with its seconds and nanos since the epoch. Throws
 * NotASettlement for anything else, and for a fraction finer than a millisecond.
 */
export function timeText(value, where) {
  const m = typeof value === 'string' ? TIME.exec(value) : null;
  if (!m) throw new NotASettlement(`${where}: ${JSON.stringify(value)} is not an RFC 3339 UTC time`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (year < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 ||
      date.getUTCDate() !== day || date.getUTCHours() !== hour ||
      date.getUTCMinutes() !== minute || date.getUTCSeconds() !== second) {
    throw new NotASettlement(`${where}: ${JSON.stringify(value)} is not a date and time`);
  }
  const fraction = (m[7] ?? '').padEnd(9, '0');
  if (!fraction.endsWith('000000')) {
    throw new NotASettlement(`${where}: ${JSON.stringify(value)} is not a whole millisecond`);
  }
  return {
    text: `${m.slice(1, 4).join('-')}T${m.slice(4, 7).join(':')}.${fraction.slice(0, 3)}Z`,
    seconds: BigInt(date.getTime() / 1000),
    nanos: Number(fraction),
  };
}

function object(value, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new NotASettlement(`${where}: not an object`);
  }
  return value;
}

/** The canonical bytes of `json` as message `type` (docs/AUDIT.md); `skip`: field numbers left out. */
export function encode(json, type, skip = new Set(), where = type) {
  object(json, where);
  const fields = SCHEMA[type];
  const byName = new Map();
  for (const f of fields) {
    byName.set(f[1], f);
    byName.set(snake(f[1]), f);
  }
  const values = new Map();
  for (const [name, value] of Object.entries(json)) {
    const f = byName.get(name);
    if (!f) throw new NotASettlement(`${where}: unknown field ${JSON.stringify(name)}`);
    if (values.has(f[0])) throw new NotASettlement(`${where}: field ${f[1]} given twice`);
    values.set(f[0], value);
  }
  const parts = [];
  for (const [number, name, kind, sub] of [...fields].sort((a, b) => a[0] - b[0])) {
    if (!values.has(number) || skip.has(number)) continue;
    const value = values.get(number);
    const at = `${where}.${name}`;
    if (kind === 'string') {
      const bytes = text(value, at);
      if (bytes.length) parts.push(lengthDelimited(number, bytes));
    } else if (kind === 'int32' || kind === 'int64') {
      const v = integer(value, kind, at);
      if (v !== 0n) parts.push(key(number, 0), varint(v));
    } else if (kind === 'optional int64') {
      parts.push(key(number, 0), varint(integer(value, kind, at)));
    } else if (kind === 'bool') {
      if (typeof value !== 'boolean') throw new NotASettlement(`${at}: not true or false`);
      if (value) parts.push(key(number, 0), Uint8Array.of(1));
    } else if (kind === 'enum') {
      const v = enumValue(value, sub, at);
      if (v !== 0) parts.push(key(number, 0), varint(v));
    } else if (kind === 'repeated enum') {
      if (!Array.isArray(value)) throw new NotASettlement(`${at}: not an array`);
      const packed = concat(value.map((item, i) => varint(enumValue(item, sub, `${at}[${i}]`))));
      if (packed.length) parts.push(lengthDelimited(number, packed));
    } else if (kind === 'message') {
      parts.push(lengthDelimited(number, encode(value, sub, new Set(), at)));
    } else if (kind === 'timestamp') { // google.protobuf.Timestamp: seconds = 1, nanos = 2
      const { seconds, nanos } = timeText(value, at);
      const body = [];
      if (seconds !== 0n) body.push(key(1, 0), varint(seconds));
      if (nanos !== 0) body.push(key(2, 0), varint(nanos));
      parts.push(lengthDelimited(number, concat(body)));
    } else {
      if (!Array.isArray(value)) throw new NotASettlement(`${at}: not an array`);
      value.forEach((item, i) => {
        const bytes = kind === 'repeated string'
          ? text(item, `${at}[${i}]`)
          : encode(item, sub, new Set(), `${at}[${i}]`);
        parts.push(lengthDelimited(number, bytes));
      });
    }
  }
  return concat(parts);
}

export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

function fromHex(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

async function sha256(bytes) {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
}

/** The key set (the JSON of GetVerificationKeys) as a Map keyId -> {publicKey, notBefore, notAfter}. */
export function readKeys(json) {
  const keys = new Map();
  const list = json?.keys;
  if (!Array.isArray(list)) throw new Error('not a key set: no "keys" list');
  for (const k of list) {
    if (k?.algorithm !== 'SIGNATURE_ALGORITHM_ED25519' || !/^[0-9a-f]{64}$/.test(k.publicKey ?? '')) {
      throw new Error(`key ${JSON.stringify(k?.keyId)}: not an Ed25519 key of 64 hex digits`);
    }
    // the bounds as signed texts (fixed width: they compare as text); absent = open
    const bound = (name) => (k[name] === undefined ? ''
      : timeText(k[name], `key ${JSON.stringify(k.keyId)}.${name}`).text);
    keys.set(k.keyId, {
      publicKey: fromHex(k.publicKey),
      notBefore: bound('notBefore'),
      notAfter: bound('notAfter'),
    });
  }
  return keys;
}

/**
 * The first key that one JSON object of `text` gives twice (`netMoney` twice, or `net_money`
 * beside `netMoney`: JSON.parse keeps the last, and protobuf's JSON takes both names), or null.
 * `text` must be valid JSON.
 */
export function keyGivenTwice(text) {
  const stack = [];
  const camel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top && top.expectKey) {
        const key = camel(JSON.parse(text.slice(i, j + 1)));
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === '{') stack.push({ keys: new Set(), expectKey: true, object: true });
    else if (c === '[') stack.push({ keys: null, expectKey: false, object: false });
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',' && stack.at(-1)?.object) stack.at(-1).expectKey = true;
    i += 1;
  }
  return null;
}

/** A stored settlement's Settlement: a SettleResponse ({"settlement": …, "receipt": …}) or a
 * bare one. */
export function unwrap(stored) {
  if (stored && typeof stored === 'object' && 'settlement' in stored &&
      Object.keys(stored).every((k) => k === 'settlement' || k === 'receipt')) {
    return stored.settlement;
  }
  return stored;
}

/**
 * Check one stored settlement (its parsed JSON). `keys`: from readKeys, or null to check the
 * digests only. Resolves to {verdict: 'valid' | 'invalid' | 'digests-only', failures (codes),
 * signatureChecked, contentHex, settlementDigest, settlementId, keyId, issuedAt} — digest and id
 * as recomputed here, never as stored.
 */
export async function verifySettlement(stored, keys) {
  const s = unwrap(stored);
  let content;
  try {
    content = encode(s, 'Settlement', OUTSIDE_CONTENT);
    // the fields outside the content must still be of their kinds
    encode(Object.fromEntries(Object.entries(s).filter(([k]) =>
      ['settlementDigest', 'issuedAt', 'signature', 'settlement_digest', 'issued_at']
        .includes(k))), 'Settlement');
  } catch (e) {
    if (e instanceof NotASettlement) {
      return { verdict: 'invalid', failures: ['file'], reason: e.message, signatureChecked: false };
    }
    throw e;
  }
  const get = (camel) => s[camel] ?? s[snake(camel)] ?? '';
  const profile = s.profile ?? {};
  const failures = [];
  const digest = await sha256(content);
  const idText = `${get('requestDigest')}\n${profile.digest ?? ''}\n${get('engineVersion')}`;
  let id = await sha256(
    UTF8.encode(`cpsettle-settlement-id/v2\n${idText}\n${get('engineDigest')}`));
  // v1 ids (before the engine digest was part of them) stay valid for settlements stored then.
  const legacyId = await sha256(UTF8.encode(`cpsettle-settlement-id/v1\n${idText}`));
  if (get('settlementId') === legacyId) id = legacyId;
  else if (get('settlementId') !== id) failures.push('settlement_id');
  if (get('settlementDigest') !== digest) failures.push('settlement_digest');
  const sig = s.signature ?? {};
  const algorithm = typeof sig.algorithm === 'number'
    ? ENUMS.SignatureAlgorithm[sig.algorithm] ?? '' : sig.algorithm ?? '';
  const keyId = sig.keyId ?? sig.key_id ?? '';
  const stamp = s.issuedAt ?? s.issued_at;
  const issuedAt = stamp === undefined ? '' : timeText(stamp, 'Settlement.issuedAt').text;
  let checked = false;
  if (algorithm !== 'SIGNATURE_ALGORITHM_ED25519') { // absent, NONE or unknown
    if (keys) failures.push('signature');
  } else if (keys) {
    const k = keys.get(keyId);
    if (!k) {
      failures.push('signature.key_id');
    } else {
      checked = true;
      const value = sig.value ?? '';
      const message = UTF8.encode(`cpsettle-signature/v1\n${digest}\n${issuedAt}\n${keyId}`);
      let good = false;
      if (/^[0-9a-f]{128}$/.test(value)) {
        const publicKey = await crypto.subtle.importKey(
          'raw', k.publicKey, { name: 'Ed25519' }, false, ['verify']);
        good = await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, fromHex(value), message);
      }
      if (!good) failures.push('signature');
      else if ((k.notBefore && issuedAt < k.notBefore) || (k.notAfter && issuedAt > k.notAfter)) {
        failures.push('signature.key_window');
      }
    }
  }
  return {
    verdict: failures.length ? 'invalid' : (keys ? 'valid' : 'digests-only'),
    failures,
    signatureChecked: checked,
    contentHex: toHex(content),
    settlementDigest: digest,
    settlementId: id,
    algorithm,
    keyId,
    issuedAt,
  };
}
