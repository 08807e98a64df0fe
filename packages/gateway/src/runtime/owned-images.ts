import type Docker from 'dockerode';

/**
 * Removes the images labelled `ringfence.managed=1` (and `labels`, an engine-side pre-filter)
 * that `select` picks by their labels: the images ringfence commits from sandboxes (a fork's,
 * `ringfence.role=fork-image`; checkpoints and snapshots) go with their sandbox, their gateway,
 * or the sweep of a dead gateway, as its containers and networks do. Each goes by its tags, so an
 * image another one was committed on top of is only untagged, and goes with that one (the engine
 * prunes untagged parents). An image already gone is not a failure: the sweep and a reaper may
 * race for the same leftovers.
 */
export async function removeManagedImages(
  docker: Docker,
  select: (labels: Record<string, string> | undefined) => boolean,
  labels: readonly string[],
): Promise<{ images: string[]; errors: string[] }> {
  const report = { images: [] as string[], errors: [] as string[] };
  const found = await docker.listImages({ filters: { label: [...labels] } });
  for (const image of found.filter((i) => select(i.Labels ?? undefined))) {
    const references = (image.RepoTags ?? []).filter((tag) => tag !== '<none>:<none>');
    for (const reference of references.length > 0 ? references : [image.Id]) {
      try {
        await docker.getImage(reference).remove();
        report.images.push(reference);
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) continue;
        report.errors.push(`${reference}: ${(error as Error).message}`);
      }
    }
  }
  return report;
}
