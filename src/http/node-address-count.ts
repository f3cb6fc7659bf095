/**
 * @module Connections per client address on a node:http listener (MCP, authorization server), so one
 * address holding slow connections (reopened as they close) cannot take the listener's whole cap from
 * everyone else. The address is the client a trusted proxy named in its PROXY header, else the peer.
 */
import type { Socket } from 'node:net';
import { createConnectionCap } from './connection-cap.ts';
import { clientAddressOf } from './proxy-protocol.ts';

export interface AddressCount {
  /** Counts the connection against its address until it closes; false (and nothing counted) past the limit. */
  admit(socket: Socket): boolean;
}

/** `max` connections per address; 0 admits every connection. */
export function createAddressCount(name: string, max: number): AddressCount {
  if (max === 0) return { admit: () => true };
  const held = new Map<string, number>();
  const cap = createConnectionCap(`${name} (per address)`, max);
  return {
    admit(socket) {
      const address = clientAddressOf(socket) ?? '';
      const n = held.get(address) ?? 0;
      if (n >= max) {
        cap.refuse();
        return false;
      }
      held.set(address, n + 1);
      socket.once('close', () => {
        const left = (held.get(address) ?? 1) - 1;
        if (left > 0) held.set(address, left);
        else held.delete(address);
      });
      return true;
    },
  };
}
