/**
 * @module The accepted path of a REST query string, compiled per operation.
 *
 * Nearly every request an integrator sends is plain (`zip=77002&age=40&page=2`) and valid. For those,
 * {@link PlainReader.read} scans the raw query text once and builds the validated parameters straight
 * from it: no name/value pairs, no `Map`, no ajv, no error list, and the request's metadata (names sent,
 * aliases used, values to echo) kept in the reader's own reused slots. It never refuses anything: the
 * first thing that is not plainly valid (an unknown or repeated name, an escape, an empty value, a value
 * out of range, a missing required name...) makes it answer null, and the request takes the general
 * path (query.ts parseQuery), which finds and words every error. So the two paths accept the same
 * requests with the same parameters; test/operations/plain-query.test.ts checks that over a corpus.
 *
 * The metadata lives in the reader, so a reader belongs to one request scratch (query.ts) and what it
 * answers is valid while that request holds the scratch.
 */
import type { JsonSchema, QuerySpec } from './query-spec.ts';

/** How a parameter's text is checked and converted (the JSON Schema keywords our query schemas use). */
interface Slot {
  readonly name: string;
  readonly kind: 'string' | 'integer' | 'number' | 'boolean' | 'list';
  readonly minimum: number;
  readonly maximum: number;
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: RegExp | null;
  /** Allowed values; the reader answers the schema's own string (no text is made). */
  readonly values: readonly string[] | null;
  readonly fallback: unknown;
  /** Lists: the items' slot and the item count bounds. */
  readonly item: Slot | null;
  readonly minItems: number;
  readonly maxItems: number;
}

const SCALAR_KEYS = new Set([
  'type',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'enum',
  'default',
  'description',
  'example',
  'x-pro',
]);
const LIST_KEYS = new Set(['type', 'items', 'minItems', 'maxItems', 'description', 'example', 'x-pro']);

/** A slot for `schema`, or null when it uses anything the reader does not check (its requests then take the general path). */
function slotOf(name: string, schema: JsonSchema, list: boolean): Slot | null {
  const keys = Object.keys(schema);
  if (list) {
    if (schema.type !== 'array' || keys.some((k) => !LIST_KEYS.has(k))) return null;
    const item = slotOf(`${name}.item`, (schema.items ?? {}) as JsonSchema, false);
    if (item === null || (item.kind !== 'integer' && item.kind !== 'string') || item.fallback !== undefined) return null;
    return {
      ...scalar(name, 'list'),
      item,
      minItems: typeof schema.minItems === 'number' ? schema.minItems : 0,
      maxItems: typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY,
    };
  }
  if (keys.some((k) => !SCALAR_KEYS.has(k))) return null;
  const t = schema.type;
  if (t !== 'string' && t !== 'integer' && t !== 'number' && t !== 'boolean') return null;
  if (schema.enum !== undefined && (t !== 'string' || !Array.isArray(schema.enum))) return null;
  return {
    ...scalar(name, t),
    minimum: typeof schema.minimum === 'number' ? schema.minimum : Number.NEGATIVE_INFINITY,
    maximum: typeof schema.maximum === 'number' ? schema.maximum : Number.POSITIVE_INFINITY,
    minLength: typeof schema.minLength === 'number' ? schema.minLength : 0,
    maxLength: typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY,
    pattern: typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null,
    values: (schema.enum as string[] | undefined) ?? null,
    fallback: schema.default,
  };
}

function scalar(name: string, kind: Slot['kind']): Slot {
  return {
    name,
    kind,
    minimum: Number.NEGATIVE_INFINITY,
    maximum: Number.POSITIVE_INFINITY,
    minLength: 0,
    maxLength: Number.POSITIVE_INFINITY,
    pattern: null,
    values: null,
    fallback: undefined,
    item: null,
    minItems: 0,
    maxItems: Number.POSITIVE_INFINITY,
  };
}

/**
 * Characters a plain query may hold. Anything else (`%` escapes, `+` for a space, quotes, controls,
 * non-ASCII) goes the general way, which decodes and trims as URLSearchParams does.
 */
const PLAIN = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,~=&') PLAIN[c.charCodeAt(0)] = 1;

const NONE = -1;

/** The metadata of the reader's last request (operation.ts RequestMeta), in reused slots. */
class PlainMeta {
  readonly #reader: PlainReader;

  constructor(reader: PlainReader) {
    this.#reader = reader;
  }

  /** Canonical names sent, in the order sent: made only when asked (a tier check below Pro). */
  get given(): string[] {
    const r = this.#reader;
    const out: string[] = [];
    for (let i = 0; i < r.sentCount; i++) out.push(r.slots[r.sent[i]!]!.name);
    return out;
  }

  /** The aliases used (a `ReadonlySet`'s `has`). */
  readonly aliasUsed = {
    has: (alias: string): boolean => {
      const r = this.#reader;
      const a = r.aliasIndex.get(alias);
      return a !== undefined && (r.aliasBits & (1 << a)) !== 0;
    },
  };

  /** The values as sent, by canonical name (a `ReadonlyMap`'s `get`). */
  readonly raw = {
    get: (name: string): string | undefined => {
      const r = this.#reader;
      const i = r.index.get(name);
      return i === undefined ? undefined : r.texts[i];
    },
  };
}

/** The answer of {@link PlainReader.read}: the reader's own objects, rewritten by its next call. */
export interface PlainRead {
  readonly params: Record<string, unknown>;
  readonly meta: PlainMeta;
}

export class PlainReader {
  readonly slots: readonly Slot[];
  /** Canonical name → slot. */
  readonly index: ReadonlyMap<string, number>;
  /** Alias → its bit in {@link aliasBits}. */
  readonly aliasIndex: ReadonlyMap<string, number>;
  readonly #names: readonly string[];
  /** For each name of {@link #names}: its slot, and its alias bit or NONE. */
  readonly #nameSlot: Int32Array;
  readonly #nameAlias: Int32Array;
  // Flat arrays walked by index: destructuring for-of loops allocated an iterator per pass (~250 B a request).
  readonly #required: Int32Array;
  /** Pairs of slots, flattened: [a0, b0, a1, b1…]. */
  readonly #alternatives: Int32Array;
  readonly #exclusive: Int32Array;
  readonly #defaultSlots: Int32Array;
  readonly #defaultValues: readonly unknown[];
  /** The last request's values: text as sent (echoed by links), slots sent in order, aliases used. */
  readonly texts: Array<string | undefined>;
  readonly sent: Int32Array;
  sentCount = 0;
  aliasBits = 0;
  readonly #meta: PlainMeta;
  /** {@link #listOf}'s lists: by slot, then by length. */
  readonly #lists: Array<Array<unknown[] | undefined> | undefined> = [];
  /** The parameters, one object for every request: each slot's name, undefined when not given. */
  readonly #params: Record<string, unknown>;
  /**
   * Sets every slot's name of {@link #params} to undefined, each by its own name: a loop storing
   * `params[name]` for varying names goes through V8's megamorphic keyed store, ~13 ns a name (~240 ns
   * a search request), where these stores cost ~5 ns for all of them.
   */
  readonly #clearParams: (params: Record<string, unknown>) => void;
  readonly #read: PlainRead;

  private constructor(spec: QuerySpec, slots: Slot[]) {
    this.slots = slots;
    const index = new Map(slots.map((s, i) => [s.name, i]));
    this.index = index;
    const aliases = Object.entries(spec.aliases ?? {});
    this.aliasIndex = new Map(aliases.map(([a], i) => [a, i]));
    this.#names = [...slots.map((s) => s.name), ...aliases.map(([a]) => a)];
    this.#nameSlot = Int32Array.from(this.#names, (_, i) => (i < slots.length ? i : index.get(aliases[i - slots.length]![1])!));
    this.#nameAlias = Int32Array.from(this.#names, (_, i) => (i < slots.length ? NONE : i - slots.length));
    this.#required = Int32Array.from((spec.schema.required ?? []) as string[], (n) => index.get(n)!);
    const pairs = (list: readonly (readonly [string, string])[] | undefined): Int32Array =>
      Int32Array.from((list ?? []).flat(), (n) => index.get(n)!);
    this.#alternatives = pairs(spec.alternatives);
    this.#exclusive = pairs(spec.exclusive);
    const defaulted = slots.flatMap((s, i) => (s.fallback === undefined ? [] : [i]));
    this.#defaultSlots = Int32Array.from(defaulted);
    this.#defaultValues = defaulted.map((i) => slots[i]!.fallback);
    this.texts = slots.map(() => undefined);
    this.sent = new Int32Array(slots.length);
    this.#meta = new PlainMeta(this);
    this.#params = Object.fromEntries(slots.map((s) => [s.name, undefined]));
    // The names are the schema's own property names (JSON-quoted), never request text.
    this.#clearParams = new Function('p', slots.map((s) => `p[${JSON.stringify(s.name)}] = undefined;`).join('\n')) as (
      params: Record<string, unknown>,
    ) => void;
    this.#read = { params: this.#params, meta: this.#meta };
  }

  /** The reader of `spec`, or null when its schema uses something the reader does not check. */
  static compile(spec: QuerySpec): PlainReader | null {
    const props = (spec.schema.properties ?? {}) as Record<string, JsonSchema>;
    const lists = new Set(spec.lists ?? []);
    const slots: Slot[] = [];
    for (const [name, schema] of Object.entries(props)) {
      const slot = slotOf(name, schema, lists.has(name));
      if (slot === null) return null;
      slots.push(slot);
    }
    const other = Object.keys(spec.schema).filter((k) => k !== 'type' && k !== 'properties' && k !== 'required');
    const aliased = Object.values(spec.aliases ?? {});
    // 31 aliases at most (their uses are bits of one number), none of a list (whose repetitions append).
    if (other.length > 0 || aliased.length > 31 || aliased.some((n) => lists.has(n))) return null;
    return new PlainReader(spec, slots);
  }

  /**
   * The validated parameters and metadata of a plain, valid request, or null for the general path. The
   * answer (its `meta` in particular) is valid until this reader's next call.
   */
  read(raw: string, pathParams: Readonly<Record<string, string>>): PlainRead | null {
    const texts = this.texts;
    for (let i = 0; i < this.sentCount; i++) texts[this.sent[i]!] = undefined;
    this.sentCount = 0;
    this.aliasBits = 0;
    const n = raw.length;
    for (let i = 0; i < n; i++) {
      const c = raw.charCodeAt(i);
      // `%2C` (a comma, as URLSearchParams and most clients write one) is the one escape read here.
      if (c === 37 && separatorAt(raw, i) === 3) i += 2;
      else if (c >= 128 || PLAIN[c] === 0) return this.#abandon();
    }
    const params = this.#params;
    const slots = this.slots;
    this.#clearParams(params);
    for (const k in pathParams) {
      const s = this.index.get(k);
      const v = pathParams[k]!;
      if (s === undefined || !Object.hasOwn(pathParams, k) || this.slots[s]!.kind !== 'string' || !this.#stringOk(this.slots[s]!, v)) {
        return this.#abandon();
      }
      params[k] = v;
    }
    let start = 0;
    while (start < n) {
      let end = raw.indexOf('&', start);
      if (end < 0) end = n;
      if (end > start && !this.#pair(raw, start, end, params, pathParams)) return this.#abandon();
      start = end + 1;
    }
    const required = this.#required;
    for (let i = 0; i < required.length; i++) if (params[slots[required[i]!]!.name] === undefined) return this.#abandon();
    const alternatives = this.#alternatives;
    for (let i = 0; i < alternatives.length; i += 2) {
      if ((texts[alternatives[i]!] === undefined) === (texts[alternatives[i + 1]!] === undefined)) return this.#abandon();
    }
    const exclusive = this.#exclusive;
    for (let i = 0; i < exclusive.length; i += 2) {
      if (texts[exclusive[i]!] !== undefined && texts[exclusive[i + 1]!] !== undefined) return this.#abandon();
    }
    const defaults = this.#defaultSlots;
    for (let i = 0; i < defaults.length; i++) {
      const name = slots[defaults[i]!]!.name;
      if (params[name] === undefined) params[name] = this.#defaultValues[i];
    }
    // Lists are checked for their item count once every repetition is in.
    for (let i = 0; i < this.sentCount; i++) {
      const slot = this.slots[this.sent[i]!]!;
      if (slot.kind !== 'list') continue;
      const items = (params[slot.name] as unknown[]).length;
      if (items < slot.minItems || items > slot.maxItems) return this.#abandon();
    }
    return this.#read;
  }

  #abandon(): null {
    for (let i = 0; i < this.sentCount; i++) this.texts[this.sent[i]!] = undefined;
    this.sentCount = 0;
    this.aliasBits = 0;
    return null;
  }

  /** One `name=value` of `raw[start, end)`: false when it is not plainly valid. */
  #pair(raw: string, start: number, end: number, params: Record<string, unknown>, pathParams: Readonly<Record<string, string>>): boolean {
    const eq = raw.indexOf('=', start);
    // No value, or an empty one: the general path drops or refuses it.
    if (eq < 0 || eq >= end - 1) return false;
    const at = this.#nameAt(raw, start, eq);
    if (at === NONE) return false;
    const s = this.#nameSlot[at]!;
    const slot = this.slots[s]!;
    if (Object.hasOwn(pathParams, slot.name)) return false;
    const alias = this.#nameAlias[at]!;
    const prior = this.texts[s];
    // An alias next to its canonical name, or a name repeated: the general path compares or refuses.
    if (prior !== undefined && (slot.kind !== 'list' || alias !== NONE)) return false;
    if (alias !== NONE) this.aliasBits |= 1 << alias;
    const escaped = raw.indexOf('%', eq + 1);
    const plainText = escaped < 0 || escaped >= end;
    // Only a list's separators may be escaped.
    if (!plainText && slot.kind !== 'list') return false;
    const value = this.#value(slot, raw, eq + 1, end, params[slot.name]);
    if (value === undefined) return false;
    params[slot.name] = value;
    // A string value is its own text; any other is echoed as sent, decoded (lists: their commas).
    const text = typeof value === 'string' ? value : plainText ? raw.slice(eq + 1, end) : decodeCommas(raw, eq + 1, end);
    if (prior === undefined) {
      this.texts[s] = text;
      this.sent[this.sentCount++] = s;
    } else this.texts[s] = `${prior},${text}`;
    return true;
  }

  /** Which of {@link #names} is `raw[start, end)`, or NONE. */
  #nameAt(raw: string, start: number, end: number): number {
    const length = end - start;
    const names = this.#names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (name.length === length && raw.startsWith(name, start)) return i;
    }
    return NONE;
  }

  /** The value of `raw[start, end)` for `slot` (non-empty), or undefined when it is not plainly valid. */
  #value(slot: Slot, raw: string, start: number, end: number, prior: unknown): unknown {
    switch (slot.kind) {
      case 'integer':
      case 'number':
        return numberAt(slot, raw, start, end);
      case 'boolean':
        if (end - start === 4 && raw.startsWith('true', start)) return true;
        if (end - start === 5 && raw.startsWith('false', start)) return false;
        return undefined;
      case 'string':
        return this.#stringAt(slot, raw, start, end);
      case 'list': {
        // Sized once: pushing into [] grew a 17-slot store for a household of three.
        let count = 1;
        for (let i = start; i < end; i++) if (separatorAt(raw, i) > 0) count++;
        const before = prior === undefined ? 0 : (prior as unknown[]).length;
        const items = prior === undefined ? this.#listOf(slot, count) : new Array<unknown>(before + count);
        for (let i = 0; i < before; i++) items[i] = (prior as unknown[])[i];
        const item = slot.item!;
        let from = start;
        for (let n = before; n < items.length; n++) {
          let to = from;
          while (to < end && separatorAt(raw, to) === 0) to++;
          if (to === from) return undefined;
          const v = item.kind === 'integer' ? numberAt(item, raw, from, to) : this.#stringAt(item, raw, from, to);
          if (v === undefined) return undefined;
          items[n] = v;
          from = to + separatorAt(raw, to);
        }
        return items;
      }
    }
  }

  /**
   * A list of `count` items for `slot`: the reader's own, one per slot and length, rewritten by every
   * read (like the parameters object it goes into).
   */
  #listOf(slot: Slot, count: number): unknown[] {
    const s = this.index.get(slot.name)!;
    const bySize = (this.#lists[s] ??= []);
    let list = bySize[count];
    if (list === undefined) bySize[count] = list = new Array<unknown>(count).fill(undefined);
    return list;
  }

  #stringAt(slot: Slot, raw: string, start: number, end: number): string | undefined {
    const length = end - start;
    if (length < slot.minLength || length > slot.maxLength) return undefined;
    if (slot.values !== null) {
      // The schema's own string: matched in place, so no text is made.
      const values = slot.values;
      for (let i = 0; i < values.length; i++) if (values[i]!.length === length && raw.startsWith(values[i]!, start)) return values[i];
      return undefined;
    }
    const v = raw.slice(start, end);
    return slot.pattern === null || slot.pattern.test(v) ? v : undefined;
  }

  /** A decoded path parameter against its slot: what {@link #stringAt} checks, once no code point is two units. */
  #stringOk(slot: Slot, v: string): boolean {
    // The schema's lengths count code points.
    for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) >= 0xd800 && v.charCodeAt(i) <= 0xdfff) return false;
    return this.#stringAt(slot, v, 0, v.length) !== undefined;
  }
}

/** The length of the list separator at `i` of `raw`: 1 for `,`, 3 for `%2C` (or `%2c`), 0 for none. */
function separatorAt(raw: string, i: number): number {
  const c = raw.charCodeAt(i);
  if (c === 44) return 1;
  if (c !== 37 || raw.charCodeAt(i + 1) !== 50) return 0;
  const d = raw.charCodeAt(i + 2);
  return d === 67 || d === 99 ? 3 : 0;
}

/** Where {@link decodeCommas} writes the text it makes. */
const DECODED = Buffer.allocUnsafe(1024);

/** `raw[start, end)` with its escaped commas decoded (what URLSearchParams gives for it), as one new string. */
function decodeCommas(raw: string, start: number, end: number): string {
  if (end - start > DECODED.length) return raw.slice(start, end).replaceAll('%2C', ',').replaceAll('%2c', ',');
  let n = 0;
  for (let i = start; i < end; i++) {
    if (separatorAt(raw, i) === 3) {
      DECODED[n++] = 44; // ,
      i += 2;
    } else DECODED[n++] = raw.charCodeAt(i);
  }
  return DECODED.toString('latin1', 0, n);
}

/** 10^k, exact for k ≤ 22. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * The number `raw[start, end)` denotes, when it is plain digits (an integer slot) or digits with at
 * most one point (a number slot) and within the slot's range; else undefined. Equal to `Number(text)`:
 * an integer below 2^53 divided by an exact power of ten is the correctly rounded value of the text.
 */
function numberAt(slot: Slot, raw: string, start: number, end: number): number | undefined {
  let m = 0;
  let digits = 0;
  let fraction = -1;
  for (let i = start; i < end; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (fraction >= 0) fraction++;
    } else if (c === 46 && fraction < 0 && slot.kind === 'number') fraction = 0;
    else return undefined;
  }
  if (digits === 0 || m > Number.MAX_SAFE_INTEGER || fraction > 22) return undefined;
  const v = fraction > 0 ? m / POW10[fraction]! : m;
  return v < slot.minimum || v > slot.maximum ? undefined : v;
}
