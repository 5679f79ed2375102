import { describe, expect, it } from "vitest";
import { visibleText } from "../../contract/visibleText";

/** The one helper the console and both report formats show names through. */
describe("visibleText", () => {
  it("writes out what a reader could not see or that reorders what they see", () => {
    expect(visibleText("ro\u200Bot")).toBe("ro\\u200Bot");
    expect(visibleText("admin\u202Egnp.exe")).toBe("admin\\u202Egnp.exe");
    expect(visibleText("a\rb\nc\td")).toBe("a\\u000Db\\u000Ac\\u0009d");
    expect(visibleText("root\u00A0")).toBe("root\\u00A0");
    expect(visibleText("\u2066x\u2069\uFEFF\u00AD\u3164")).toBe("\\u2066x\\u2069\\uFEFF\\u00AD\\u3164");
    expect(visibleText("tag\u{E0072}")).toBe("tag\\u{E0072}");
    expect(visibleText("lone\uD800")).toBe("lone\\uD800");
  });

  it("leaves ordinary text alone, and a spelled-out escape cannot pass for a real one", () => {
    for (const name of ["root", "ci-deploy v2", "café", "e\u0301", "ключ", "鍵", "a.b_c:d"])
      expect(visibleText(name)).toBe(name);
    expect(visibleText("ro\\u200Bot")).toBe("ro\\\\u200Bot");
    expect(visibleText("ro\\u200Bot")).not.toBe(visibleText("ro\u200Bot"));
  });
});
