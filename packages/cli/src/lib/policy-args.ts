import { Args, Flags } from '@oclif/core';

/** The signed policy every `policy verify|show|install` reads. */
export const policyArg = Args.string({ description: 'signed policy (DSSE envelope)', required: true });

/** The trust root(s) it is verified against, oldest first for a rotation chain. */
export const rootFlag = Flags.string({
  description: 'trust root; repeat for a rotation chain, oldest first',
  required: true,
  multiple: true,
  helpValue: 'ROOT',
});
