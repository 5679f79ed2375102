import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { filesBelow, generateSdk, NATIVE_SDK_ROOT, SDK_LANGUAGES } from "../../tools/gen-sdks.mjs";

/**
 * The committed SDKs are exactly what the pinned CLI generates from the schema the built plugin
 * serves today: a descriptor change without `npm run gen-sdks` fails here, naming the files.
 */
describe("the generated SDKs in native-sdk/", () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-sdk-check-"));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it.each(SDK_LANGUAGES)("%s is what `npm run gen-sdks` writes", async (language) => {
    const outDir = path.join(scratch, language);
    await generateSdk({ binDir: inject("pulumiBinDir"), language, outDir });
    const fresh = filesBelow(outDir);
    const committed = filesBelow(path.join(NATIVE_SDK_ROOT, language));
    const differing = [...new Set([...fresh.keys(), ...committed.keys()])]
      .filter((file) => !fresh.get(file)?.equals(committed.get(file) ?? Buffer.alloc(0)) || !committed.has(file))
      .sort();
    expect(differing, "run `npm run gen-sdks` and commit native-sdk/").toEqual([]);
  });
});
