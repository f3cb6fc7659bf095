/**
 * @module Version of the data compiler. It is part of every build hash: bump it when a change to the
 * compiler changes what a build contains, so that existing builds are not reused by mistake.
 */
export const COMPILER_VERSION = '2025.3.1';
