/**
 * The two DOS/OEM code pages Windows consoles use most in the West (437 and 850), which the
 * WHATWG TextDecoder does not know. Single-byte: bytes 0x00-0x7F are ASCII.
 *
 * @example
 * ```ts
 * import { decodeOem } from "./codepages.ts";
 * decodeOem("ibm437", new Uint8Array([0x82, 0x41])); // "éA"
 * ```
 * @module
 */

const HIGH_HALVES: Record<string, string> = {
  ibm437:
    "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀" +
    "αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0",
  ibm850:
    "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀" +
    "ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u00ad±‗¾¶§÷¸°¨·¹³²■\u00a0",
};

/** The OEM code pages this module decodes. */
export const OEM_LABELS: readonly string[] = Object.keys(HIGH_HALVES);

/** Decodes bytes in one of {@link OEM_LABELS}. */
export function decodeOem(label: string, bytes: Uint8Array): string {
  const high = HIGH_HALVES[label];
  let text = "";
  for (const byte of bytes) text += byte < 0x80 ? String.fromCharCode(byte) : high[byte - 0x80];
  return text;
}
