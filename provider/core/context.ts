import type { ProxyClient } from "../../sdk";
import { type Collection, ReadCoalescer } from "./coalescer";

/** What a coalesced read needs of a kind (its descriptor has both). */
type Readable<W extends { id: string }> = { kind: string; collection(client: ProxyClient): Collection<W> };

import { type Adoption, adoptionFromEnvironment } from "./adoption";
import { type ApiSettings, clientFor } from "./settings";

/**
 * What every rule of one provider process shares, handed to each rule as its first argument: one
 * client, so pacing sees every request of the key; one set of coalesced reads, so one walk of a
 * list answers every resource; and the way to warn the user, which differs by front-end.
 */
export interface ProviderContext {
  client: ProxyClient;
  /** One object of a kind as the API holds it now (a coalesced read, see coalescer.ts); undefined when gone. */
  read<W extends { id: string }>(descriptor: Readable<W>, id: string): Promise<W | undefined>;
  warn(message: string): void;
  /** Set in the \`up\` that \`pulumi-proxy recover\` runs: objects a killed run made, to take over (adoption.ts). */
  adoption?: Adoption;
}

export function contextFor(settings: ApiSettings, userAgent: string, warn: (message: string) => void): ProviderContext {
  // Every write of every resource goes through this client, so counting its finished writes here is
  // the one place that tells the coalescers which list pages may predate a write (see coalescer.ts).
  let writesDone = 0;
  const client = clientFor(settings, userAgent, () => {
    writesDone += 1;
  });
  const coalescers = new Map<string, ReadCoalescer<{ id: string }>>();
  const adoption = adoptionFromEnvironment();
  return {
    client,
    warn,
    ...(adoption ? { adoption } : {}),
    read<W extends { id: string }>(descriptor: Readable<W>, id: string): Promise<W | undefined> {
      let coalescer = coalescers.get(descriptor.kind);
      if (!coalescer) {
        coalescer = new ReadCoalescer<{ id: string }>(descriptor.collection(client), () => writesDone);
        coalescers.set(descriptor.kind, coalescer);
      }
      // One coalescer per kind, made from this kind's own collection: what it reads is that kind's W.
      return coalescer.read(id) as Promise<W | undefined>;
    },
  };
}
