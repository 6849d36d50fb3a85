// A tool's result as an MCP client sees it (CallToolResult): its content
// blocks in order (text, images, audio, resource links, embedded
// resources), its structured content, and whether it is an error.

export type Block =
  | { kind: 'text'; text: string }
  | { kind: 'image'; src: string; mime: string; bytes: number }
  | { kind: 'media'; mime: string; bytes: number; what: string } // audio, or an image the page will not show
  | { kind: 'link'; uri: string; name: string; description: string; mime: string }
  | { kind: 'resource'; uri: string; mime: string; text?: string; bytes?: number }
  | { kind: 'other'; json: string };

export interface Shown {
  isError: boolean;
  blocks: Block[];
  /** The structured content as indented JSON, or "". */
  structured: string;
}

/** Image types shown inline (as a data: URL, which the page's CSP allows for images only). */
const SHOWN_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/avif']);

const str = (v: unknown) => (typeof v === 'string' ? v : '');
/** base64Bytes is how many bytes base64 text decodes to. */
const base64Bytes = (b64: string) => Math.floor((b64.replace(/=+$/, '').length * 3) / 4);

/** showResult reads a tools/call result (as JSON) into what the page shows. */
export function showResult(result: unknown): Shown {
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  const content = Array.isArray(r.content) ? r.content : [];
  const blocks: Block[] = content.map((raw): Block => {
    const c = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    switch (c.type) {
      case 'text':
        return { kind: 'text', text: str(c.text) };
      case 'image': {
        const mime = str(c.mimeType), data = str(c.data);
        if (SHOWN_IMAGES.has(mime.toLowerCase()) && /^[A-Za-z0-9+/]*={0,2}$/.test(data))
          return { kind: 'image', src: `data:${mime};base64,${data}`, mime, bytes: base64Bytes(data) };
        return { kind: 'media', mime, bytes: base64Bytes(data), what: 'image' };
      }
      case 'audio':
        return { kind: 'media', mime: str(c.mimeType), bytes: base64Bytes(str(c.data)), what: 'audio' };
      case 'resource_link':
        return { kind: 'link', uri: str(c.uri), name: str(c.name) || str(c.title), description: str(c.description), mime: str(c.mimeType) };
      case 'resource': {
        const res = (typeof c.resource === 'object' && c.resource !== null ? c.resource : {}) as Record<string, unknown>;
        const b: Block = { kind: 'resource', uri: str(res.uri), mime: str(res.mimeType) };
        if (typeof res.text === 'string') b.text = res.text;
        else if (typeof res.blob === 'string') b.bytes = base64Bytes(res.blob);
        return b;
      }
    }
    return { kind: 'other', json: JSON.stringify(c, null, 2) };
  });
  const structured = r.structuredContent === undefined || r.structuredContent === null ? '' : JSON.stringify(r.structuredContent, null, 2);
  return { isError: r.isError === true, blocks, structured };
}
