/**
 * Redaction of `multipart/form-data` bodies: a part whose field name is secret
 * has its content replaced, a JSON part is redacted like a JSON body; every
 * other byte (boundaries, part headers, file contents) is kept. Works on the
 * bytes as latin1 text, where one character is one byte.
 */

export class MultipartSyntaxError extends Error {}

export interface MultipartPart {
  /** Byte offsets of the part's content. */
  readonly contentStart: number;
  readonly contentEnd: number;
  readonly name: string | undefined;
  readonly contentType: string | undefined;
}

export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The parts of a multipart body; throws MultipartSyntaxError when it is not one. */
export function multipartParts(body: Buffer, boundary: string): MultipartPart[] {
  const text = body.toString('latin1');
  const delimiter = `--${boundary}`;
  let at = text.startsWith(delimiter) ? 0 : text.indexOf(`\r\n${delimiter}`);
  if (at < 0) throw new MultipartSyntaxError('no boundary in the body');
  if (at > 0) at += 2;
  const parts: MultipartPart[] = [];
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    if (text.startsWith('--', afterDelimiter)) return parts;
    if (!text.startsWith('\r\n', afterDelimiter)) throw new MultipartSyntaxError('a boundary is not followed by CRLF');
    const headersEnd = text.indexOf('\r\n\r\n', afterDelimiter);
    if (headersEnd < 0) throw new MultipartSyntaxError('a part has no end of headers');
    const next = text.indexOf(`\r\n${delimiter}`, headersEnd + 4);
    if (next < 0) throw new MultipartSyntaxError('the closing boundary is missing');
    const headerText = text.slice(afterDelimiter + 2, headersEnd);
    parts.push({
      contentStart: headersEnd + 4,
      contentEnd: next,
      name: partHeader(headerText, /content-disposition:[^\r]*?;\s*name="([^"]*)"/i),
      contentType: partHeader(headerText, /content-type:\s*([^\r;]+)/i),
    });
    at = next + 2;
  }
}

const partHeader = (headers: string, pattern: RegExp): string | undefined => pattern.exec(headers)?.[1]?.trim();
