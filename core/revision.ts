/** Revisions and build labels: the characters of git refs and version strings, nothing a shell would act on. */
export const REVISION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/=,:+@^~-]*$/;
export const REVISION_MAX_LENGTH = 200;
export const REVISION_RULE = 'a git revision or build label: up to 200 of letters, digits and . _ / = , : + @ ^ ~ - (starting with a letter or digit)';

export const isRevision = (value: string): boolean => value.length <= REVISION_MAX_LENGTH && REVISION_PATTERN.test(value);
