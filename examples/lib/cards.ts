/**
 * Example helper: read a folder of Markdown cards (`<kb>/cards/<locale>/<id>.md`,
 * YAML front matter then `## ` sections) into LangChain Documents, one per
 * section, with `metadata.parentId` = the card id — the key `retrace eval
 * --graph` reads by default to collapse chunks to their card.
 * Self-contained on purpose: an agent of your own would load its documents
 * its own way.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Document } from "@langchain/core/documents";

export function loadCardDocuments(kbDir: string): Document[] {
  const docs: Document[] = [];
  const cardsDir = path.join(kbDir, "cards");
  for (const locale of readdirSync(cardsDir).sort()) {
    for (const file of readdirSync(path.join(cardsDir, locale))
      .filter((f) => f.endsWith(".md"))
      .sort()) {
      const text = readFileSync(path.join(cardsDir, locale, file), "utf8");
      const id = path.basename(file, ".md");
      const title = /^title:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? id;
      const body = text.slice(text.indexOf("---", 3) + 3);
      body
        .split(/^## /m)
        .slice(1)
        .forEach((section, i) => {
          const [heading = "", ...rest] = section.split("\n");
          docs.push(
            new Document({
              pageContent: `${title}\n${heading}\n${rest.join("\n").trim()}`,
              metadata: { parentId: id, locale, section: i + 1 },
              id: `${id}#${i + 1}`,
            }),
          );
        });
    }
  }
  return docs;
}

/** Lowercased word tokens (letters and digits of any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
