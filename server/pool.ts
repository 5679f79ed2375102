/**
 * The reference server's address pool. Only documentation ranges (RFC 5737) are ever handed out, so
 * nothing the tests or the demo print can point at a real host. Two places are deliberately tiny
 * (three addresses) so that tests and demos can run a city out of capacity cheaply.
 */
export interface Place {
  readonly country: string;
  readonly city: string;
  readonly asn: string;
  readonly addresses: readonly string[];
}

function range(prefix: string, first: number, last: number): string[] {
  const out: string[] = [];
  for (let host = first; host <= last; host++) out.push(`${prefix}.${host}`);
  return out;
}

export const PLACES: readonly Place[] = [
  { country: "us", city: "new york", asn: "as7922", addresses: range("192.0.2", 10, 129) },
  { country: "us", city: "dallas", asn: "as7018", addresses: range("192.0.2", 130, 249) },
  { country: "us", city: "miami", asn: "as20115", addresses: range("192.0.2", 250, 252) },
  { country: "de", city: "frankfurt", asn: "as3320", addresses: range("198.51.100", 10, 129) },
  { country: "de", city: "berlin", asn: "as6805", addresses: range("198.51.100", 130, 249) },
  { country: "gb", city: "london", asn: "as2856", addresses: range("203.0.113", 10, 129) },
  { country: "jp", city: "tokyo", asn: "as2516", addresses: range("203.0.113", 130, 249) },
  { country: "nl", city: "amsterdam", asn: "as1136", addresses: range("203.0.113", 250, 252) },
];

export interface AddressChoice {
  ip: string;
  place: Place;
}

/**
 * The lowest free address in the wanted country (and city, when given). Deterministic on purpose:
 * tests can predict the next address, and the lowest freed address is exactly the one a careless
 * replacement would hand straight back.
 */
export function pickAddress(
  want: { country: string; city?: string | undefined },
  isUnavailable: (ip: string) => boolean,
): AddressChoice | null {
  for (const place of PLACES) {
    if (place.country !== want.country || (want.city !== undefined && place.city !== want.city)) continue;
    for (const ip of place.addresses) if (!isUnavailable(ip)) return { ip, place };
  }
  return null;
}
