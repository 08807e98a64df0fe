import type { RegistrationInput } from '../registration/plan.js';

/** What one client entry becomes. */
export type Translation =
  | { readonly kind: 'register'; readonly input: Omit<RegistrationInput, 'name'>; readonly notes: string[] }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'ringfence' };
