// ESLint's flat configuration (docs/architecture.md, "Formatting and linting"): the recommended rules of ESLint and
// typescript-eslint (syntax-only, no type information: fast enough for `npm test`), Node globals, browser globals for
// the pages' browser code. Layout is prettier's job (.prettierrc.json); no rule here is about formatting.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    // Generated, built, vendored or data files.
    ignores: [
      "dist/",
      "coverage/",
      "node_modules/",
      "kb/",
      "**/fixtures/",
      "**/*.generated.ts",
      "api/",
      "bench/node_modules/",
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // A leading underscore is this code's mark of a binding kept on purpose: a field dropped by destructuring
      // (`const { timings: _timings, ...rest } = report`) or a callback parameter a signature requires.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
      // `export interface TurnReport extends z.output<typeof turnReportObject> {}` names a zod-inferred type so that
      // editors and the API report show the name rather than the expanded object (CONVENTIONS.md 17, schemas are the types).
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // The code that shows, strips or escapes terminal control characters and ANSI sequences (src/control-chars.ts,
      // src/redact.ts, the renderers' width and JUnit escaping) and the tests of it must match those characters.
      "no-control-regex": "off",
    },
  },
  {
    files: ["src/**/browser/**/*.ts"],
    languageOptions: { globals: { ...globals.browser } },
  },
);
