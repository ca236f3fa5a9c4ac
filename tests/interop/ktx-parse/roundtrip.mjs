// roundtrip.mjs LIST - for every .ktx2 file named in LIST (one path per line): ktx-parse must read it
// and write(read(buf), {keepWriter: true}) must give back exactly the same bytes. Also checks the fields
// ktx-parse decodes (KTXwriter, level count, supercompression) against the header. Exit 1 on any failure.
import { readFileSync } from 'node:fs';
import { read, write } from 'ktx-parse';

const list = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.endsWith('.ktx2'));
let failed = 0;
for (const path of list) {
  const buf = new Uint8Array(readFileSync(path));
  try {
    const c = read(buf);
    const out = write(c, { keepWriter: true });
    const problems = [];
    if (out.byteLength !== buf.byteLength) problems.push(`length ${out.byteLength} != ${buf.byteLength}`);
    else {
      for (let i = 0; i < buf.byteLength; i++)
        if (out[i] !== buf[i]) {
          problems.push(`first difference at byte ${i}: ${out[i]} != ${buf[i]}`);
          break;
        }
    }
    if (!String(c.keyValue.KTXwriter || '').startsWith('kiln ')) problems.push(`KTXwriter is ${c.keyValue.KTXwriter}`);
    const view = new DataView(buf.buffer, buf.byteOffset);
    if (c.levels.length !== Math.max(1, view.getUint32(40, true))) problems.push('level count');
    if (c.supercompressionScheme === 2 && !String(c.keyValue.KTXwriterScParams || '').startsWith('--zstd'))
      problems.push('KTXwriterScParams missing');
    if (c.dataFormatDescriptor[0].samples.length === 0) problems.push('no DFD samples');
    if (problems.length) {
      failed++;
      console.log(`FAIL ${path}: ${problems.join('; ')}`);
    }
  } catch (e) {
    failed++;
    console.log(`FAIL ${path}: ${e.message}`);
  }
}
console.log(`ktx-parse: ${list.length - failed}/${list.length} files re-serialised byte for byte`);
process.exit(failed ? 1 : 0);
