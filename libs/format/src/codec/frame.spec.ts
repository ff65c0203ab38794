import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { CODEC_STORED, CODEC_ZSTD, decodeFrame, encodeFrame } from './frame.js';

describe('frame', () => {
  const compressible = new TextEncoder().encode('abc'.repeat(1000));
  const tiny = new Uint8Array([1, 2, 3]);

  it('compresses when it pays and stores otherwise', () => {
    expect(encodeFrame(compressible)[0]).toBe(CODEC_ZSTD);
    expect(encodeFrame(tiny)[0]).toBe(CODEC_STORED);
    expect(decodeFrame(encodeFrame(compressible), 't')).toEqual(compressible);
    expect(decodeFrame(encodeFrame(tiny), 't')).toEqual(tiny);
  });

  it('detects any flipped byte before decompressing', () => {
    const f = encodeFrame(compressible);
    for (let i = 0; i < f.length; i++) {
      const g = f.slice();
      g[i]! ^= 0x40;
      expect(() => decodeFrame(g, 't')).toThrow(CorruptDataError);
    }
  });

  it('rejects a frame shorter than its envelope', () => {
    expect(() => decodeFrame(new Uint8Array(4), 't')).toThrow(/shorter than a frame/);
  });
});
