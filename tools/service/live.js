// The live view of glcv serve (served as /live.js). A camera's stream is the stream protocol of
// docs/STREAM.md over a WebSocket: HELLO, JOIN (with an HMAC-SHA256 of the token from Web Crypto),
// WELCOME (the server's MAC checked), then frame-delta packets, each checked (header CRC, checksum,
// the rules of "The rules a decoder follows") and applied to an RGBA picture: the camera's frame in
// R, G, B and its mask in A. WebGL draws the frame with the mask tinted over it; a 2D canvas draws
// the tracked objects' boxes. Text messages from the server map packet frames to camera frames.
'use strict';

const LABEL_VIEWER = 'glcv-stream-1 viewer', LABEL_SERVER = 'glcv-stream-1 server';
const FORMAT_BYTES = {1: 1, 2: 3, 3: 4, 4: 3, 5: 4};
const STATUS = ['accepted', 'token required', 'wrong token', 'unsupported version', 'server full', 'malformed JOIN'];
const END_REASON = ['the camera ended', 'the service stopped', 'the service failed'];

// ---- bytes -------------------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82F63B78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

// CRC-32C (Castagnoli): crc32c(bytes), or continued: crc32c(more, crc32c(first, 0, true), ...)
function crcUpdate(state, bytes) {
  for (let i = 0; i < bytes.length; i++) state = CRC_TABLE[(state ^ bytes[i]) & 0xff] ^ (state >>> 8);
  return state >>> 0;
}
const crc32c = (bytes) => (crcUpdate(0xffffffff, bytes) ^ 0xffffffff) >>> 0;

const ascii = (bytes, from, n) => String.fromCharCode(...bytes.subarray(from, from + n));
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

async function hmac(token, label, ns, nv) {
  const key = await crypto.subtle.importKey('raw', token, {name: 'HMAC', hash: 'SHA-256'}, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, concat(new TextEncoder().encode(label), ns, nv)));
}

function sameBytes(a, b) {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

// ---- the delta packets (docs/STREAM.md) ----------------------------------------------------------------

class CorruptPacket extends Error {}

// The 64-byte header: its fields, or throws CorruptPacket.
function parseHeader(b) {
  const v = new DataView(b.buffer, b.byteOffset, 64);
  if (ascii(b, 0, 8) !== 'GLCVDLTA') throw new CorruptPacket('not a packet (magic)');
  if (v.getUint16(8, true) !== 1 || v.getUint16(10, true) !== 64) throw new CorruptPacket('another version');
  if (crc32c(b.subarray(0, 48)) !== v.getUint32(52, true)) throw new CorruptPacket('the header CRC does not match');
  for (let i = 56; i < 64; i++) if (b[i]) throw new CorruptPacket('a reserved byte is set');
  const flags = v.getUint32(12, true);
  const h = {
    key: flags & 1, snapshot: (flags >> 1) & 1, frame: Number(v.getBigUint64(16, true)),
    width: v.getUint32(24, true), height: v.getUint32(28, true), format: b[32], layout: b[33],
    compression: b[34], records: v.getUint32(36, true), payload: v.getUint32(40, true),
    raw: v.getUint32(44, true), checksum: v.getUint32(48, true),
  };
  if (flags & ~3) throw new CorruptPacket('unknown flags');
  if (h.width < 1 || h.width > 16384 || h.height < 1 || h.height > 16384) throw new CorruptPacket('a size out of range');
  if (!FORMAT_BYTES[h.format]) throw new CorruptPacket('an unknown pixel format');
  if (h.layout < 1 || h.layout > 3 || h.compression > 1) throw new CorruptPacket('an unknown layout or compression');
  h.bytes = h.width * h.height * FORMAT_BYTES[h.format];
  if (h.snapshot && !h.key) throw new CorruptPacket('a snapshot that is no keyframe');
  if ((h.key !== 0) !== (h.layout === 1)) throw new CorruptPacket('keyframe and layout disagree');
  if (h.records > h.bytes || (h.key && h.records !== h.bytes)) throw new CorruptPacket('records out of range');
  const raw = h.layout === 1 ? h.bytes : h.layout === 2 ? 5 * h.records : Math.ceil(h.bytes / 8) + h.records;
  if (h.raw !== raw || (!h.key && raw >= h.bytes)) throw new CorruptPacket('the payload size does not match');
  if (h.compression === 0 && h.payload !== h.raw) throw new CorruptPacket('the payload size does not match');
  if (h.compression === 1 && (h.payload < 1 || h.payload >= h.raw)) throw new CorruptPacket('compressed size out of range');
  return h;
}

// Checks the packet's checksum and applies its payload to `picture` (a Uint8Array of h.bytes).
function applyPacket(h, header, payload, picture) {
  const zeroed = header.slice();
  zeroed.fill(0, 48, 52);
  const sum = (crcUpdate(crcUpdate(0xffffffff, zeroed), payload) ^ 0xffffffff) >>> 0;
  if (sum !== h.checksum) throw new CorruptPacket('the checksum does not match');
  if (h.compression) throw new CorruptPacket('a compressed packet (this page has no Zstandard decoder)');
  if (h.layout === 1) { picture.set(payload); return; }
  const k = h.records;
  if (h.layout === 2) {
    const idx = new DataView(payload.buffer, payload.byteOffset, 4 * k);
    const changes = [];
    let last = -1;
    for (let r = 0; r < k; r++) {
      const i = idx.getUint32(4 * r, true);
      if (i <= last || i >= h.bytes) throw new CorruptPacket('indices not increasing or out of range');
      changes.push(i);
      last = i;
    }
    for (let r = 0; r < k; r++) picture[changes[r]] = (picture[changes[r]] + payload[4 * k + r]) & 0xff;
    return;
  }
  const bits = Math.ceil(h.bytes / 8);
  let count = 0;
  for (let j = 0; j < bits; j++) for (let m = payload[j]; m; m &= m - 1) count++;
  if (count !== k) throw new CorruptPacket('the bitmap does not have `records` bits');
  if (h.bytes % 8 && payload[bits - 1] >> (h.bytes % 8)) throw new CorruptPacket('bitmap bits past the picture');
  let r = bits;
  for (let j = 0; j < bits; j++) {
    let m = payload[j];
    while (m) {
      const b = 31 - Math.clz32(m & -m);
      const i = 8 * j + b;
      picture[i] = (picture[i] + payload[r++]) & 0xff;
      m &= m - 1;
    }
  }
}

// ---- drawing ---------------------------------------------------------------------------------------------

class Screen {
  constructor(canvas, overlay) {
    this.canvas = canvas;
    this.overlay = overlay;
    const gl = canvas.getContext('webgl', {premultipliedAlpha: false, preserveDrawingBuffer: true});
    this.gl = gl;
    if (!gl) return;
    const shader = (type, text) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, text);
      gl.compileShader(s);
      return s;
    };
    const p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER,
      'attribute vec2 at; varying vec2 uv; void main() { uv = vec2(at.x, -at.y) * 0.5 + 0.5; gl_Position = vec4(at, 0, 1); }'));
    gl.attachShader(p, shader(gl.FRAGMENT_SHADER,
      'precision mediump float; varying vec2 uv; uniform sampler2D pic; uniform float mask;' +
      'void main() { vec4 c = texture2D(pic, uv); vec3 tint = mix(c.rgb, vec3(1.0, 0.15, 0.1), 0.45);' +
      ' gl_FragColor = vec4(c.a > 0.5 && mask > 0.5 ? tint : c.rgb, 1.0); }'));
    gl.linkProgram(p);
    gl.useProgram(p);
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
    const at = gl.getAttribLocation(p, 'at');
    gl.enableVertexAttribArray(at);
    gl.vertexAttribPointer(at, 2, gl.FLOAT, false, 0, 0);
    this.maskLocation = gl.getUniformLocation(p, 'mask');
    gl.bindTexture(gl.TEXTURE_2D, gl.createTexture());
    for (const [k, v] of [[gl.TEXTURE_MIN_FILTER, gl.NEAREST], [gl.TEXTURE_MAG_FILTER, gl.NEAREST],
                          [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]])
      gl.texParameteri(gl.TEXTURE_2D, k, v);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  }

  draw(picture, width, height, format, showMask) {
    const gl = this.gl;
    if (!gl) return;
    // the largest whole scale that fits the page (pixels stay square and sharp); the boxes are drawn
    // at that scale
    const main = this.canvas.parentElement.parentElement;
    const fit = Math.min((main.clientWidth - 16) / width, (main.clientHeight - 48) / height);
    const scale = Math.max(1, Math.floor(fit));
    if (this.canvas.width !== width || this.canvas.height !== height || this.scale !== scale) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.overlay.width = width * scale;
      this.overlay.height = height * scale;
      for (const c of [this.canvas, this.overlay]) {
        c.style.width = `${width * scale}px`;
        c.style.height = `${height * scale}px`;
      }
      this.scale = scale;
    }
    gl.viewport(0, 0, width, height);
    const glFormat = format === 3 ? gl.RGBA : format === 1 ? gl.LUMINANCE : gl.RGB;
    gl.texImage2D(gl.TEXTURE_2D, 0, glFormat, width, height, 0, glFormat, gl.UNSIGNED_BYTE, picture);
    gl.uniform1f(this.maskLocation, showMask && format === 3 ? 1 : 0);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }

  boxes(objects, show) {
    const g = this.overlay.getContext('2d');
    g.clearRect(0, 0, this.overlay.width, this.overlay.height);
    if (!show) return;
    g.lineWidth = 2;
    g.font = '11px sans-serif';
    const k = this.scale || 1;
    for (const [id, x, y, w, h] of objects) {
      g.strokeStyle = g.fillStyle = `hsl(${(id * 67) % 360} 90% 60%)`;
      g.strokeRect(x * k + 1, y * k + 1, w * k - 2, h * k - 2);
      g.fillText(String(id), x * k + 3, y * k > 14 ? y * k - 4 : y * k + 13);
    }
  }
}

// ---- one camera's stream ---------------------------------------------------------------------------------

class Viewer {
  constructor(camera, token, screen, onStatus) {
    this.camera = camera;
    this.token = token;
    this.screen = screen;
    this.onStatus = onStatus;
    this.buf = new Uint8Array(0);
    this.state = 'hello';
    this.picture = null;     // {header, bytes}
    this.waitKey = false;    // a STATE error: skip deltas until a keyframe
    this.applied = 0;        // packets applied
    this.indexOf = new Map(); // packet frame -> camera frame index
    this.objects = [];
    this.error = null;
    this.ended = null;
    this.busy = Promise.resolve();
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.ws = new WebSocket(`${scheme}//${location.host}/live/${encodeURIComponent(camera)}`, 'glcv-stream-1');
    this.ws.binaryType = 'arraybuffer';
    this.ws.onmessage = (e) => {
      if (typeof e.data === 'string') return this.info(e.data);
      const chunk = new Uint8Array(e.data);
      this.busy = this.busy.then(() => this.receive(chunk)).catch((err) => this.fail(err));
    };
    this.ws.onclose = () => {
      if (!this.error && !this.ended) this.fail(new Error('the connection closed'));
    };
    this.onStatus(`connecting to ${camera}...`);
  }

  close() {
    this.closedByUser = true;
    this.ws.close();
  }

  fail(err) {
    if (this.error || this.closedByUser) return;
    this.error = err.message;
    this.onStatus(`${this.camera}: ${err.message}`);
    this.ws.close();
  }

  info(text) {
    let m;
    try { m = JSON.parse(text); } catch (e) { return; }
    for (const [frame, index] of m.frames || []) this.indexOf.set(frame, index);
    if (this.indexOf.size > 512) this.indexOf.delete(this.indexOf.keys().next().value);
    if (m.boxes) { this.objects = m.boxes.objects; this.objectsIndex = m.boxes.index; }
  }

  take(n) {
    if (this.buf.length < n) return null;
    const out = this.buf.slice(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async receive(chunk) {
    this.buf = this.buf.length ? concat(this.buf, chunk) : chunk;
    for (;;) {
      if (this.state === 'hello') {
        const hello = this.take(48);
        if (!hello) return;
        if (ascii(hello, 0, 8) !== 'GLCVHELO') throw new Error('not a glcv stream');
        const wantsToken = new DataView(hello.buffer).getUint16(10, true) & 1;
        if (!wantsToken && this.token.length) throw new Error('the service takes no token, so it cannot prove it holds yours');
        this.ns = hello.slice(16, 48);
        this.nv = crypto.getRandomValues(new Uint8Array(32));
        const join = new Uint8Array(80);
        join.set(new TextEncoder().encode('GLCVJOIN'), 0);
        new DataView(join.buffer).setUint16(8, 1, true);
        join.set(this.nv, 16);
        if (this.token.length) {
          new DataView(join.buffer).setUint16(10, 1, true);
          join.set(await hmac(this.token, LABEL_VIEWER, this.ns, this.nv), 48);
        }
        this.ws.send(join);
        this.state = 'welcome';
      } else if (this.state === 'welcome') {
        const w = this.take(48);
        if (!w) return;
        if (ascii(w, 0, 8) !== 'GLCVWLCM') throw new Error('no WELCOME');
        const status = new DataView(w.buffer).getUint16(10, true);
        if (status !== 0) throw new Error(`refused: ${STATUS[status] || 'status ' + status}`);
        if (this.token.length && !sameBytes(w.slice(16, 48), await hmac(this.token, LABEL_SERVER, this.ns, this.nv)))
          throw new Error('the service could not prove it holds the token');
        this.state = 'header';
        this.onStatus(`${this.camera}: waiting for a keyframe`);
      } else if (this.state === 'header') {
        if (this.buf.length < 64) return;
        if (ascii(this.buf, 0, 8) === 'GLCVSEND') {
          const end = this.take(64);
          this.ended = END_REASON[new DataView(end.buffer).getUint16(10, true)] || 'ended';
          this.onStatus(`${this.camera}: ${this.ended}`);
          return;
        }
        this.header = this.take(64);
        this.h = parseHeader(this.header);
        if (this.h.bytes > 64 * 1024 * 1024) throw new CorruptPacket('a picture over 64 MiB');
        this.state = 'payload';
      } else {
        const payload = this.take(this.h.payload);
        if (!payload) return;
        this.state = 'header';
        this.apply(this.h, this.header, payload);
      }
    }
  }

  apply(h, header, payload) {
    const p = this.picture;
    const follows = p && !this.waitKey && p.h.width === h.width && p.h.height === h.height &&
                    p.h.format === h.format && h.frame === p.h.frame + 1;
    if (!h.key && !follows) { // STATE: ask for a keyframe once, skip deltas until one comes
      if (!this.waitKey) {
        const req = new Uint8Array(16);
        req.set(new TextEncoder().encode('GLCVVREQ'), 0);
        new DataView(req.buffer).setUint32(8, 1, true);
        this.ws.send(req);
        this.waitKey = true;
      }
      return;
    }
    const bytes = h.key ? new Uint8Array(h.bytes) : p.bytes;
    applyPacket(h, header, payload, bytes);
    this.picture = {h, bytes};
    this.waitKey = false;
    this.applied++;
    this.screen.draw(bytes, h.width, h.height, h.format, document.getElementById('mask').checked);
    this.screen.boxes(this.objects, document.getElementById('objects').checked);
    const index = this.indexOf.get(h.frame);
    this.onStatus(`${this.camera}: ${h.width}x${h.height}, frame ${index ?? '?'}, ${this.applied} pictures`);
  }
}

// ---- the page ----------------------------------------------------------------------------------------------

const tokenInput = document.getElementById('token');
const statusLine = document.getElementById('status');
const screen = new Screen(document.getElementById('picture'), document.getElementById('boxes'));
let viewer = null;

const hashToken = new URLSearchParams(location.hash.slice(1)).get('token');
if (hashToken) tokenInput.value = hashToken;
const tokenBytes = () => new TextEncoder().encode(tokenInput.value);

function watch(camera) {
  if (viewer) viewer.close();
  viewer = new Viewer(camera, tokenBytes(), screen, (text) => { statusLine.textContent = text; });
  for (const b of document.querySelectorAll('#cameras button')) b.classList.toggle('on', b.dataset.id === camera);
}

async function loadCameras() {
  const headers = tokenInput.value ? {Authorization: `Bearer ${tokenInput.value}`} : {};
  const reply = await fetch('/cameras', {headers, cache: 'no-store'});
  const list = document.getElementById('cameras');
  if (!reply.ok) {
    list.textContent = reply.status === 401 ? 'the token is needed' : `cameras: ${reply.status}`;
    return [];
  }
  const cameras = await reply.json();
  list.textContent = '';
  for (const c of cameras) {
    const b = document.createElement('button');
    b.dataset.id = c.id;
    b.innerHTML = '<span></span> <small></small>';
    b.firstChild.textContent = c.id;
    b.lastChild.textContent = c.up ? `${c.width}x${c.height}${c.moving ? ', moving' : ''}` : 'down';
    if (!c.up) b.lastChild.className = 'down';
    b.onclick = () => watch(c.id);
    b.classList.toggle('on', viewer !== null && viewer.camera === c.id);
    list.appendChild(b);
  }
  return cameras;
}

tokenInput.addEventListener('change', loadCameras);
loadCameras();
setInterval(loadCameras, 5000);

// For scripts that drive the page (tests): the stream's state, and a check of the picture against a
// reference frame and mask (PNG bytes, base64) within a threshold, done here in the page.
window.glcvLive = {
  watch,
  loadCameras,
  state: () => viewer && {
    camera: viewer.camera, applied: viewer.applied, error: viewer.error, ended: viewer.ended,
    frame: viewer.picture ? viewer.picture.h.frame : null,
    index: viewer.picture ? viewer.indexOf.get(viewer.picture.h.frame) ?? null : null,
    objects: viewer.objects,
  },
  // Freezes a copy of the picture (and its camera frame index) for check().
  hold: () => {
    const p = viewer && viewer.picture;
    const index = p ? viewer.indexOf.get(p.h.frame) : undefined;
    if (!p || index === undefined) return null;
    window.glcvLive.held = {h: p.h, bytes: p.bytes.slice(), index};
    return {index, frame: p.h.frame, width: p.h.width, height: p.h.height};
  },
  check: async (framePng, maskPng, threshold) => {
    const held = window.glcvLive.held;
    const pixels = async (b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], {type: 'image/png'}),
                                             {colorSpaceConversion: 'none', premultiplyAlpha: 'none'});
      const c = new OffscreenCanvas(bitmap.width, bitmap.height);
      const g = c.getContext('2d');
      g.drawImage(bitmap, 0, 0);
      return g.getImageData(0, 0, bitmap.width, bitmap.height).data;
    };
    const frame = await pixels(framePng), mask = await pixels(maskPng);
    const {width, height} = held.h;
    let maxDiff = 0, where = null, maskDiffers = 0;
    for (let i = 0; i < width * height; i++) {
      for (let c = 0; c < 3; c++) {
        const d = Math.abs(held.bytes[4 * i + c] - frame[4 * i + c]);
        if (d > maxDiff) { maxDiff = d; where = {x: i % width, y: Math.floor(i / width), channel: c}; }
      }
      if ((held.bytes[4 * i + 3] > 127) !== (mask[4 * i] > 127)) maskDiffers++;
    }
    return {index: held.index, maxDiff, where, maskDiffers, withinThreshold: maxDiff <= threshold};
  },
};
