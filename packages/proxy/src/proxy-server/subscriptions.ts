/** One upstream resource a session subscribed to. */
export interface SubscribedResource {
  readonly server: string;
  readonly uri: string;
}

/**
 * Resource subscriptions across downstream sessions, counted per upstream resource. The upstream sees one
 * subscription per resource (the first subscriber subscribes, the last one leaving unsubscribes), and a
 * `notifications/resources/updated` goes only to the sessions that subscribed to that resource.
 */
export class ResourceSubscriptions {
  readonly #byResource = new Map<string, { readonly resource: SubscribedResource; readonly sessions: Set<string> }>();

  /** Adds `session` as a subscriber; true when it is the first one (subscribe upstream). */
  add(server: string, uri: string, session: string): boolean {
    const key = keyOf(server, uri);
    const entry = this.#byResource.get(key);
    if (entry !== undefined) {
      entry.sessions.add(session);
      return false;
    }
    this.#byResource.set(key, { resource: { server, uri }, sessions: new Set([session]) });
    return true;
  }

  /** Removes `session`; true when it was the last subscriber (unsubscribe upstream). */
  remove(server: string, uri: string, session: string): boolean {
    const key = keyOf(server, uri);
    const entry = this.#byResource.get(key);
    if (entry?.sessions.delete(session) !== true) return false;
    if (entry.sessions.size > 0) return false;
    this.#byResource.delete(key);
    return true;
  }

  /** Removes a closed session everywhere; returns the resources nobody subscribes to any more. */
  forget(session: string): SubscribedResource[] {
    const emptied: SubscribedResource[] = [];
    for (const entry of [...this.#byResource.values()]) {
      if (this.remove(entry.resource.server, entry.resource.uri, session)) emptied.push(entry.resource);
    }
    return emptied;
  }

  /** The sessions subscribed to one upstream resource. */
  subscribers(server: string, uri: string): readonly string[] {
    return [...(this.#byResource.get(keyOf(server, uri))?.sessions ?? [])];
  }
}

function keyOf(server: string, uri: string): string {
  return `${server}\u0000${uri}`;
}
