// socket-path.js: where the broker's socket is, found the way skillctl finds it.
import { existsSync } from 'node:fs';

export const SYSTEM_SOCKET = '/run/skillbroker/skillbroker.sock';
export const DEV_SOCKET = 'run/skillbroker.sock'; // the `make run` layout

/**
 * The option, else $SKILLBROKER_SOCKET when set and non-empty, else the
 * system socket, unless only ./run/skillbroker.sock exists
 * (docs/skillctl.md, "Options").
 * @param {string} [path]
 * @param {Record<string, string | undefined>} [env]
 * @param {(p: string) => boolean} [exists]
 */
export function resolveSocketPath(path, env = process.env, exists = existsSync) {
  if (path) return path;
  if (env.SKILLBROKER_SOCKET) return env.SKILLBROKER_SOCKET;
  if (!exists(SYSTEM_SOCKET) && exists(DEV_SOCKET)) return DEV_SOCKET;
  return SYSTEM_SOCKET;
}
