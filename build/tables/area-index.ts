/**
 * @module Rating areas of a build, numbered in the order they are first added. The order is part of
 * the build (tables index areas by it), so the stages add areas in a fixed sequence: the geography's
 * areas first, then any the rates use, then any a ZIP location uses.
 */
export class AreaIndex {
  /** Area index → [state, rating area number]. */
  readonly keys: Array<[state: string, area: number]> = [];
  readonly #index = new Map<string, number>();

  /** The index of (state, area), added when new. */
  add(state: string, area: number): number {
    const key = `${state}:${area}`;
    let i = this.#index.get(key);
    if (i === undefined) {
      i = this.keys.length;
      this.keys.push([state, area]);
      this.#index.set(key, i);
    }
    return i;
  }

  get count(): number {
    return this.keys.length;
  }
}
