/** Field names that are secrets wherever they appear; the recorder redacts them unless `recorder.redact.names` replaces the list. */
export const DEFAULT_SECRET_NAMES = [
  'password',
  'passwd',
  'secret',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'auth_token',
  'api_key',
  'apikey',
  'private_key',
] as const;
