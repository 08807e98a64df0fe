import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { listContainers, removeContainer } from './engine-races.js';

/** Each call answers the next of `answers` in turn: a status to fail with, or 'ok'. */
function answering(answers: (number | 'ok')[]) {
  const calls: unknown[] = [];
  const call = async (options: unknown) => {
    calls.push(options);
    const answer = answers.shift() ?? 'ok';
    if (answer === 'ok') return [];
    throw Object.assign(new Error(`(HTTP code ${answer}) server error`), { statusCode: answer });
  };
  return { call, calls };
}

describe('removeContainer', () => {
  const container = (answers: (number | 'ok')[]) => {
    const { call, calls } = answering(answers);
    return { fake: { id: 'c0ffee', remove: call } as unknown as Docker.Container, calls };
  };

  it('asks again when the removal raced the container exiting (Podman 500, Docker 409), until it is gone', async () => {
    for (const raced of [500, 409]) {
      const { fake, calls } = container([raced, raced, 'ok']);
      await expect(removeContainer(fake, 1)).resolves.toBe(true);
      expect(calls).toHaveLength(3);
      expect(calls[0]).toEqual({ force: true, v: true });
    }
    const gone = container([500, 404]);
    await expect(removeContainer(gone.fake, 1)).resolves.toBe(false);
    expect(gone.calls).toHaveLength(2);
  });

  it('throws an error that lasts or is not a race, and takes a removal that stays in progress as someone else’s', async () => {
    const stuck = container([500, 500, 500, 500, 500, 500]);
    await expect(removeContainer(stuck.fake, 1)).rejects.toThrow('500');
    expect(stuck.calls).toHaveLength(5);
    const elsewhere = container([409, 409, 409, 409, 409]);
    await expect(removeContainer(elsewhere.fake, 1)).resolves.toBe(false);
    const refused = container([403]);
    await expect(removeContainer(refused.fake, 1)).rejects.toThrow('403');
    expect(refused.calls).toHaveLength(1);
  });
});

describe('listContainers', () => {
  const engine = (answers: (number | 'ok')[]) => {
    const { call, calls } = answering(answers);
    return { fake: { listContainers: call } as unknown as Docker, calls };
  };

  it('asks again when the list raced a container exiting (Podman 500 "read /proc/<pid>/cgroup")', async () => {
    const { fake, calls } = engine([500, 500, 'ok']);
    const filters = { label: ['ringfence.managed=1'] };
    await expect(listContainers(fake, { all: true, filters }, 1)).resolves.toEqual([]);
    expect(calls).toEqual([
      { all: true, filters },
      { all: true, filters },
      { all: true, filters },
    ]);
  });

  it('throws a 500 that lasts, and any other failure at once', async () => {
    const stuck = engine([500, 500, 500, 500, 500, 500]);
    await expect(listContainers(stuck.fake, { all: true }, 1)).rejects.toThrow('500');
    expect(stuck.calls).toHaveLength(5);
    const refused = engine([400]);
    await expect(listContainers(refused.fake, { all: true }, 1)).rejects.toThrow('400');
    expect(refused.calls).toHaveLength(1);
  });
});
