// socket-path.js: where the broker's socket is: the option, the environment, or the installed one.

export const SYSTEM_SOCKET = '/run/skillbroker/skillbroker.sock';

/**
 * The option, else $SKILLBROKER_SOCKET when set and non-empty, else the
 * system socket. Never a path relative to the current directory: whoever
 * could plant a socket there would get the calls' stdin, env and files.
 * @param {string} [path]
 * @param {Record<string, string | undefined>} [env]
 */
export function resolveSocketPath(path, env = process.env) {
  if (path) return path;
  if (env.SKILLBROKER_SOCKET) return env.SKILLBROKER_SOCKET;
  return SYSTEM_SOCKET;
}
