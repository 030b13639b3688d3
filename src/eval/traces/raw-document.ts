/** A document of a recorded span as read, before it becomes a `RecordedDocument` (./otlp.ts): its content, its metadata JSON (unparsed) and its id. */
export interface RawDocument {
  content?: string;
  metadata?: string;
  id?: string;
}
