// Tiny fixtures shared by several components: a 1x1 red PNG and a 1-sample 8 kHz mono WAV.
export const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

export const SILENT_WAV = Buffer.from(
  "524946462600000057415645666d74201000000001000100401f0000401f0000010008006461746102000000" + "8080",
  "hex",
).toString("base64");

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
