// Lint run by `npm test` (`npm run lint` alone): promise misuse that the type checker lets through, and the
// architecture's import boundaries (README, "Where things live").
import tseslint from 'typescript-eslint';
import { importBoundaries } from './eslint/import-boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/**', '.build/**', '.tandem/**', 'dist/**', '.diag/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, tandem: { rules: { 'import-boundaries': importBoundaries } } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'tandem/import-boundaries': 'error',
      // Rules the sources already opt out of in places, with their reasons.
      'no-control-regex': 'error',
      'prefer-rest-params': 'error',
    },
  },
);
