import type Docker from 'dockerode';

/**
 * Removes the images labelled `ringfence.managed=1` (and `labels`, an engine-side pre-filter)
 * that `select` picks by their labels: the images ringfence commits from sandboxes (a fork's,
 * `ringfence.role=fork-image`; checkpoints and snapshots) go with their sandbox, their gateway,
 * or the sweep of a dead gateway, as its containers and networks do. Each goes by its tags, so an
 * image another one was committed on top of is only untagged, and goes with that one (the engine
 * prunes untagged parents). Only tags in ringfence's own repositories (`ringfence-…`,
 * `ringfence/…`) are removed: labels are inherited by an image built FROM another, so a person's
 * image made on top of a fork carries the fork's labels, but not its repository. An image already
 * gone is not a failure: the sweep and a reaper may race for the same leftovers; nor is one a
 * container still uses (left for a later pass).
 */
export async function removeManagedImages(
  docker: Docker,
  select: (labels: Record<string, string> | undefined) => boolean,
  labels: readonly string[],
  /** The engine's list for these labels, when the caller asked for it already. */
  listed?: Promise<Docker.ImageInfo[]>,
): Promise<{ images: string[]; errors: string[] }> {
  const report = { images: [] as string[], errors: [] as string[] };
  const found = await (listed ?? docker.listImages({ filters: { label: [...labels] } }));
  for (const image of found.filter((i) => select(i.Labels ?? undefined))) {
    const tags = (image.RepoTags ?? []).filter((tag) => tag !== '<none>:<none>');
    const ours = tags.filter((tag) => /^ringfence[-/]/.test(tag));
    // Tagged, but none of ours: someone else's image that inherited the labels.
    if (tags.length > 0 && ours.length === 0) continue;
    for (const reference of ours.length > 0 ? ours : [image.Id]) {
      try {
        await docker.getImage(reference).remove();
        report.images.push(reference);
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        // 404: already gone. 409: a container still runs from it (a persistent sandbox rewound to
        // a checkpoint, a person's container): it stays until that container goes, and a later
        // sweep, close or removal takes it then. Not forced: an image in use is never pulled away.
        if (status === 404 || status === 409) continue;
        report.errors.push(`${reference}: ${(error as Error).message}`);
      }
    }
  }
  return report;
}
