'use strict';
// The errors of sluice: one class per status code of docs/protocol.md
// section 6, all subclasses of SluiceError (the names and numbers of the
// Python client and of libsluice). A server's error reply rejects with
// the class of its code, carrying its message (and, for NotLeader, the
// leader's URL; for Moved, the owner: its cluster, the map's revision and
// its members' URLs); the client rejects with ConnectionLost, TimedOut
// and Malformed for what it meets itself.

const CODES = {
  1: ['ENOTFOUND', 'not_found', 'NotFound'],
  2: ['ESTALE', 'stale_lease', 'StaleLease'],
  3: ['ESTATE', 'bad_state', 'BadState'],
  4: ['EINVAL', 'invalid', 'Invalid'],
  5: ['ETUBE', 'bad_tube', 'BadTube'],
  6: ['EKEY', 'bad_key', 'BadKey'],
  7: ['ETOOBIG', 'payload_too_large', 'PayloadTooLarge'],
  8: ['EMSGSIZE', 'message_too_large', 'MessageTooLarge'],
  9: ['EPROTO', 'malformed', 'Malformed'],
  10: ['ETRUNC', 'truncated', 'Truncated'],
  11: ['EVERSION', 'bad_version', 'BadVersion'],
  12: ['EUNKNOWNOP', 'unknown_operation', 'UnknownOperation'],
  13: ['ENOSPC', 'log_full', 'LogFull'],
  14: ['ELOG', 'log_failed', 'LogFailed'],
  15: ['ECORRUPT', 'corrupt', 'Corrupt'],
  16: ['ETIMEDOUT', 'timed_out', 'TimedOut'],
  17: ['ENOTLEADER', 'not_leader', 'NotLeader'],
  18: ['EREPLICA', 'too_few_replicas', 'TooFewReplicas'],
  19: ['EEPOCH', 'stale_epoch', 'StaleEpoch'],
  20: ['ECONN', 'no_connection', 'ConnectionLost'],
  21: ['ENOMEM', 'out_of_memory', 'OutOfMemory'],
  22: ['ESHUTDOWN', 'shutting_down', 'ShuttingDown'],
  23: ['EEXIST', 'key_exists', 'KeyExists'],
  24: ['EPAUSED', 'paused', 'Paused'],
  25: ['ELIMIT', 'limit', 'LimitExceeded'],
  26: ['EAUTH', 'unauthenticated', 'Unauthenticated'],
  27: ['EPERM', 'not_allowed', 'NotAllowed'],
  28: ['ENOTEMPTY', 'not_empty', 'NotEmpty'],
  29: ['EGROUP', 'bad_group', 'BadGroup'],
  30: ['ECANCELED', 'cancelled', 'Cancelled'],
  31: ['ERESULT', 'result_too_large', 'ResultTooLarge'],
  32: ['ESCHED', 'bad_schedule', 'BadSchedule'],
  33: ['EMOVED', 'moved', 'Moved'],
  34: ['EBATCH', 'batch_closed', 'BatchClosed'],
  35: ['EMOVING', 'moving_in', 'MovingIn'],
};

// A moved error's second field (docs/protocol.md, "The moved error"):
// "CLUSTER REVISION URL,URL,...", the owner's leader first; null when it
// is not one.
function parseMoved(detail) {
  const m = /^(\S+) (\d+) ?(\S*)$/.exec(detail || '');
  if (!m) return null;
  return { cluster: m[1], revision: Number(m[2]),
    urls: m[3] ? m[3].split(',') : [] };
}

class SluiceError extends Error {
  constructor(message = '', leader = '', code = 0) {
    const symbol = new.target.symbol || `E${code}`;
    const num = new.target.code || code;
    const moved = num === 33 ? parseMoved(leader) : null;
    let text = message ? `${symbol}: ${message}` : symbol;
    if (moved) {
      text += ` (owner: ${moved.cluster}` +
        `${moved.urls.length ? ` at ${moved.urls.join(',')}` : ''})`;
    } else if (leader) {
      text += ` (leader: ${leader})`;
    }
    super(text);
    this.code = num;
    this.symbol = symbol;
    this.errname = new.target.errname || 'unknown';
    this.detail = message;
    this.leader = moved ? '' : leader;
    if (moved) {
      // Moved: the cluster that owns the tube, the map's revision as the
      // refusing node knows it, and the owner's members' client URLs
      this.cluster = moved.cluster;
      this.revision = moved.revision;
      this.urls = moved.urls;
    }
  }
}

const classes = {};
for (const [code, [symbol, errname, cls]] of Object.entries(CODES)) {
  const C = { [cls]: class extends SluiceError {} }[cls];
  C.code = Number(code);
  C.symbol = symbol;
  C.errname = errname;
  Object.defineProperty(C.prototype, 'name', { value: cls });
  classes[code] = C;
  module.exports[cls] = C;
}

// The error for a status code (a plain SluiceError for one unknown here).
function errorFor(code, message = '', leader = '') {
  const C = classes[code];
  return C ? new C(message, leader) : new SluiceError(message, leader, code);
}

module.exports.SluiceError = SluiceError;
module.exports.errorFor = errorFor;
module.exports.CODES = CODES;
