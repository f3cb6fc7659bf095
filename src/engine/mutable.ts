/**
 * @module `Mutable<T>`: `T` with its `readonly` members writable, the type of the per-thread records a
 * request path rewrites in place (search's query, the APTC estimate, the pipeline's current answer)
 * while readers see `T` itself.
 */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
