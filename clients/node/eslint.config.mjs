// eslint for the package's TypeScript (src, test, examples): eslint's and typescript-eslint's recommended
// rules. `npm run lint`; deploy/lint.sh runs it with tsc --strict in CI (docs/contributing.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'generated/', 'node_modules/', 'scripts/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      // `for await (const _ of ...)` drains an iterator: a leading underscore marks a name left unused
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_' }],
    },
  },
);
