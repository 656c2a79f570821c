// The storyboard editor: scenes of shot cards, edited in place, dragged to reorder; each card's keyframe (draw,
// re-roll, upload, pick an earlier one, clear) and takes (render, watch side by side, the panel's votes, use one).
// `props.value` is the board as JSON (see board.py `board_json`); every edit writes it back, and
// the Save button sends it. Card buttons send a 'card' event (app/ui/board_media.py `CardAction`); uploads go
// through `pictureInput` (kit.js). A line's ▶ asks `server.play_line` (handlers.py
// `playing`) for the line as the card has it, voiced as the render voices it.
// Text is set with .value/.textContent only: nothing from the board becomes HTML.
// Nothing lost: unsaved edits are kept in this browser (localStorage, per project and version: `board.key`) and come
// back after a tab switch or a reload; the head names them ("3 unsaved changes"); ↶ Undo steps back through edits
// (typing in one field within a second is one step), a deleted shot included, after a reload too (the steps are
// kept with the draft). Long boards: find a shot by id or words, scenes fold (with their shot range and times), and
// typing only touches its card (the board's JSON, the draft and the counts follow when typing pauses).
const { el, clear } = window.chiefKit;  // kit.js, loaded once into the page by the component's `head`
const pictureInput = (...args) => window.chiefKit.pictureInput(upload, ...args);
let board = null;
let lastJson = null;
let dragged = null;
let nextNew = 1;
const openTakes = new Set();  // shots whose takes are shown (kept across redraws)
const folded = new Set();  // scenes shown folded (kept across redraws)
const DRAFT = 'chief_draft:';
let base = null;  // the saved version as the editor got it: { key, shots: id -> [index, text], scenes: id -> text }
let undo = [];  // earlier states of the board (JSON), newest last
let lastEdit = 0;
let pending = null;  // the timer that sends the board and keeps the draft once typing pauses
let found = { q: '', at: -1 };

const root = () => element.querySelector('.sb');
const allShots = () => board.scenes.flatMap((sc) => sc.shots);
const find = (id) => {
  for (const sc of board.scenes) {
    const i = sc.shots.findIndex((s) => s.shot_id === id);
    if (i >= 0) return [sc, i];
  }
  return [null, -1];
};
const newSeed = () => (board.seed_policy === 'fixed' ? 0 : Math.floor(Math.random() * 2147483647));
const freshId = () => `new${Date.now().toString(36)}${nextNew++}`;

const EDITED = ['prompt', 'negative_prompt', 'duration', 'seed', 'camera', 'narration', 'dialogue', 'sounds', 'characters',
  'locked', 'continuity', 'description'];
const shotText = (s) => JSON.stringify(EDITED.map((k) => s[k] ?? null));
const sceneText = (sc) => JSON.stringify([sc.title || '', sc.music || '']);

function baseOf(b) {
  const shots = new Map();
  b.scenes.flatMap((sc) => sc.shots).forEach((s, i) => shots.set(s.shot_id, [i, shotText(s)]));
  return { key: b.key, shots, scenes: new Map(b.scenes.map((sc) => [sc.scene_id, sceneText(sc)])) };
}

// How many things differ from the saved version: each shot added, removed or edited, each scene retitled or with
// another music cue, and the order of the shots once.
function changes() {
  if (!base) return 0;
  let n = 0;
  const shots = allShots();
  const ids = new Set(shots.map((s) => s.shot_id));
  for (const s of shots) {
    const was = base.shots.get(s.shot_id);
    if (!was || s.isNew || was[1] !== shotText(s)) n += 1;
  }
  for (const id of base.shots.keys()) if (!ids.has(id)) n += 1;
  const kept = shots.filter((s) => base.shots.has(s.shot_id)).map((s) => base.shots.get(s.shot_id)[0]);
  if (kept.some((v, i) => i && v < kept[i - 1])) n += 1;
  for (const sc of board.scenes) if (base.scenes.has(sc.scene_id) && base.scenes.get(sc.scene_id) !== sceneText(sc)) n += 1;
  return n;
}

function keepDraft(n) {
  if (!board?.key) return;
  try {
    if (n) localStorage.setItem(DRAFT + board.key, JSON.stringify({ scenes: board.scenes, undo: keptUndo(), at: Date.now() }));
    else localStorage.removeItem(DRAFT + board.key);
  } catch (e) {
    note('This browser could not keep your unsaved edits (its storage is full or blocked): save soon.');
  }
}

// The Undo steps kept with the draft, so a reload can still step back one edit at a time: the newest first, up to
// UNDO_KEPT steps and UNDO_BYTES characters (a 140-shot board is ~100 KB a step; localStorage holds ~5 MB a site).
const UNDO_KEPT = 30;
const UNDO_BYTES = 1500000;
function keptUndo() {
  const kept = [];
  let size = 0;
  for (let i = undo.length - 1; i >= 0 && kept.length < UNDO_KEPT; i -= 1) {
    size += undo[i].length;
    if (size > UNDO_BYTES) break;
    kept.unshift(undo[i]);
  }
  return kept;
}

// Send the board (what Save and the card buttons send), keep the draft, count the changes.
function flush() {
  if (pending) { clearTimeout(pending); pending = null; }
  if (!board) return;
  const n = changes();
  board.dirty = n > 0;
  board.changes = n;
  board.rev = (board.rev || 0) + 1;  // which edit this is: a draft the server sends back names the one it was
  lastJson = JSON.stringify(board);
  props.value = lastJson;
  keepDraft(n);
  mark();
}

// An edit was made to `board`: remember the state before it for Undo (typing in one field within a second is one
// step), redraw when the cards changed, else only mark the board unsaved now and send it when typing pauses.
let lastField = null;
function commit(rerender) {
  const now = Date.now();
  const at = document.activeElement;
  if (rerender || now - lastEdit > 1000 || at !== lastField) undo.push(lastJson);
  if (undo.length > 200) undo.shift();
  lastEdit = rerender ? 0 : now;
  lastField = rerender ? null : at;
  board.dirty = true;
  if (rerender) { draw(); flush(); return; }
  const r = root();
  if (r && r.dataset.dirty !== 'yes') { r.dataset.dirty = 'yes'; }
  if (pending) clearTimeout(pending);
  pending = setTimeout(flush, 250);
}

function stepBack() {
  if (pending) flush();
  const prev = undo.pop();
  if (!prev) return;
  const was = JSON.parse(prev);
  board.scenes = was.scenes;
  lastEdit = 0;
  draw();
  flush();
  note(undo.length ? 'Undone.' : 'Undone: back to how the board was.');
}

const send = (name, data) => { flush(); trigger(name, data); };

function note(text) {
  const n = root()?.querySelector('.note');
  if (n) n.textContent = text;
}

// A new keyframe re-renders the shot's clip and the continuity shots after it: say how many and ask first (the
// server's count, `affects`). An unsaved board is not asked: cardAction refuses it.
function askFirst(shot, question) {
  if (board.dirty || shot.isNew || !shot.affects) return true;
  return window.confirm(`${shot.affects.text}. ${question}`);
}

// Finalize renders a shot (or a scene's shots) of the saved version at the final tier, keeping the draft's seed,
// keyframe and take, and cuts the film again (handlers.py `finalize`).
function finalize(data, isNew) {
  if (board.dirty || isNew) {
    note('Save the storyboard first: Finalize renders the saved version.');
    return;
  }
  note('');
  send('finalize', data);
}

// Keyframes and takes are made from the saved version: ask only when the board has no unsaved edits.
function cardAction(shot, data) {
  if (board.dirty || shot.isNew) {
    note('Save the storyboard first: keyframes and takes are made from the saved version.');
    return;
  }
  note('');
  send('card', { shot_id: shot.shot_id, ...data });
}

function button(parent, label, cls, title, fn) {
  const b = el('button', cls, label);
  b.type = 'button';
  b.title = title;
  b.addEventListener('click', (ev) => { ev.stopPropagation(); fn(); });
  parent.appendChild(b);
  return b;
}

// A creator's own track over the scene (the twin of `chief music P --scene S FILE`): any audio file, checked on the
// server (a refusal is one line and saves nothing); the header says when the scene plays one instead of its cue.
function trackControl(sc) {
  const box = el('span', 'scene-track');
  if (sc.track) box.appendChild(el('span', 'track-label', '♫ uploaded track'));
  const file = el('input', 'track-file');
  file.type = 'file';
  file.accept = 'audio/*,.wav,.flac,.mp3,.ogg,.oga,.opus,.m4a,.aac';
  file.hidden = true;
  file.addEventListener('change', async () => {
    const f = file.files[0];
    file.value = '';
    if (!f) return;
    if (f.size > board.max_track) { note(`${f.name}: larger than ${Math.round(board.max_track / 2 ** 20)} MB.`); return; }
    note(`Uploading ${f.name}…`);
    let path;
    try {
      ({ path } = await upload(f));
    } catch (e) {
      note(`${f.name}: the upload failed.`);
      return;
    }
    send('scene_track', { scene_id: sc.scene_id, action: 'upload', path });
  });
  box.appendChild(file);
  const ready = () => {  // the track goes on the saved version, unsaved edits or not; a new scene is not in it yet
    if (!sc.isNew) return true;
    note('Save the storyboard first: this scene is new (not in the saved version yet).');
    return false;
  };
  button(box, sc.track ? '♫ Replace track' : '♫ Track', 'mini track-upload',
    'Play your own track over this scene instead of its cue (WAV, FLAC, MP3, Ogg, M4A)', () => { if (ready()) file.click(); });
  if (sc.track) {
    button(box, '✕', 'mini track-clear', 'Take the track away: the scene\'s cue plays again',
      () => { if (ready()) send('scene_track', { scene_id: sc.scene_id, action: 'clear' }); });
  }
  return box;
}

function keyframeBar(shot) {
  const bar = el('div', 'kf');
  if (shot.candidates?.length) {
    const strip = el('div', 'cands');
    for (const k of shot.candidates) {
      const b = el('button', `cand${k.on ? ' on' : ''}`);
      b.type = 'button';
      b.dataset.kf = k.id;
      b.title = k.on ? 'The approved keyframe'
        : `Use this keyframe again (${k.source}${k.seed != null ? `, seed ${k.seed}` : ''}, made on v${k.version})`;
      const im = el('img');
      im.src = k.url;
      im.alt = '';
      im.draggable = false;
      b.appendChild(im);
      if (!k.on) b.addEventListener('click', () => cardAction(shot, { action: 'pick', keyframe_id: k.id }));
      strip.appendChild(b);
    }
    bar.appendChild(strip);
  }
  const row = el('div', 'kf-actions');
  if (shot.keyframe) {
    button(row, '⟳ New keyframe', 'mini kf-reroll', 'Draw another keyframe with a new seed (the old one stays a candidate)',
      () => askFirst(shot, 'Draw it?') && cardAction(shot, { action: 'reroll' }));
  } else {
    button(row, '✦ Draw keyframe', 'mini kf-draw', 'Draw a keyframe for this shot: the clip will start from it',
      () => askFirst(shot, 'Draw it?') && cardAction(shot, { action: 'draw' }));
  }
  const file = pictureInput('kf-file', board.max_upload, note, (path) => cardAction(shot, { action: 'upload', path }));
  row.appendChild(file);
  button(row, '⤒ Upload', 'mini kf-upload', 'Replace the keyframe by a picture of yours (PNG, JPEG or WebP)', () => {
    if (board.dirty || shot.isNew) cardAction(shot, {});
    else file.click();
  });
  if (shot.keyframe) {
    button(row, '✕', 'mini kf-clear', 'No keyframe: the shot renders from its prompt again',
      () => cardAction(shot, { action: 'clear' }));
  }
  bar.appendChild(row);
  return bar;
}

function takeTile(shot, t) {
  const fig = el('figure', `take${t.picked ? ' picked' : ''}${t.current ? ' current' : ''}`);
  fig.dataset.take = t.id;
  const v = el('video');
  v.src = t.clip;
  v.poster = t.thumb;
  v.muted = true;
  v.loop = true;
  v.playsInline = true;
  v.preload = 'none';
  v.title = 'Hover or click to play';
  v.addEventListener('mouseenter', () => { v.play().catch(() => {}); });
  v.addEventListener('mouseleave', () => { v.pause(); });
  v.addEventListener('click', (ev) => { ev.stopPropagation(); if (v.paused) v.play().catch(() => {}); else v.pause(); });
  fig.appendChild(v);
  const cap = el('figcaption');
  cap.appendChild(el('b', '', `#${t.number}`));
  if (t.picked) cap.appendChild(el('span', 'in-use', '✓ in use'));
  const n = t.voters.length;
  if (n) cap.appendChild(el('span', 'votes', `${n} vote${n > 1 ? 's' : ''}`));
  fig.appendChild(cap);
  if (n) {  // who voted for it, and why (on hover)
    const who = el('div', 'voters', t.voters.map((x) => x.name).join(' · '));
    who.title = t.voters.map((x) => `${x.name}${x.score != null ? ` (${x.score.toFixed(1)})` : ''}: ${x.reason}`)
      .join('\n');
    fig.appendChild(who);
  }
  if (!t.picked) {
    button(fig, 'Use', 'mini take-use', t.current ? 'Use this take: its clip is cached, nothing re-renders (a new version)'
      : 'Use this take (a new version; the shot changed since, so its clip renders again)',
    () => cardAction(shot, { action: 'use', take_id: t.id }));
  }
  return fig;
}

function takesArea(shot) {
  const t = shot.takes;
  const items = t?.items || [];
  const d = el('details', 'takes');
  d.open = openTakes.has(shot.shot_id);
  d.addEventListener('toggle', () => { if (d.open) openTakes.add(shot.shot_id); else openTakes.delete(shot.shot_id); });
  const inUse = items.find((x) => x.picked);
  d.appendChild(el('summary', '', items.length
    ? `Takes · ${items.length}${inUse ? ` · using #${inUse.number}` : ''}` : 'Takes'));
  const bar = el('div', 'takes-bar');
  const count = el('select', 'take-count');
  for (const k of [1, 2, 3, 4]) {
    const o = el('option', '', `${k} take${k > 1 ? 's' : ''}`);
    o.value = String(k);
    count.appendChild(o);
  }
  count.value = '2';
  count.title = 'How many more takes to render';
  button(bar, 'Render', 'mini take-render', 'Render more takes of this shot, each with a new seed',
    () => cardAction(shot, { action: 'takes', n: parseInt(count.value, 10) }));
  bar.appendChild(count);
  if (items.length) {
    button(bar, 'One more', 'mini take-more', 'Render one more take', () => cardAction(shot, { action: 'takes', n: 1 }));
  }
  button(bar, 'Replace', 'mini take-replace', 'Render one more take and use it at once (a new version)',
    () => cardAction(shot, { action: 'replace' }));
  d.appendChild(bar);
  if (items.length) {
    const grid = el('div', 'take-grid');
    items.forEach((x) => grid.appendChild(takeTile(shot, x)));
    d.appendChild(grid);
    const votes = el('div', 'take-votes');
    if (t.voted) {
      votes.appendChild(el('span', 'lbl', `${t.voted} critic${t.voted > 1 ? 's' : ''} watched the takes `
        + `(v${t.votes_version}); hover a name for why.`));
    }
    const undecided = t.no_preference || [];
    if (undecided.length) {  // critics whose scores barely differed: no vote, said as such
      const np = el('span', 'no-preference', `no preference: ${undecided.length}`);
      np.title = undecided.map((x) => `${x.name}: ${x.scores.map((v) => v.toFixed(2)).join(' / ')}`).join('\n');
      votes.appendChild(np);
    }
    if (t.can_vote) {
      button(votes, 'Ask the panel', 'mini take-vote', 'Each critic watches every take of this shot and votes for one',
        () => cardAction(shot, { action: 'vote' }));
    }
    d.appendChild(votes);
  }
  return d;
}

const clock = (t) => `${Math.floor(t / 60)}:${String(Math.floor(t % 60)).padStart(2, '0')}`;

function mark() {
  const r = root();
  if (!r) return;
  r.dataset.dirty = board.dirty ? 'yes' : 'no';
  const flag = r.querySelector('.dirty');
  const n = board.changes || 0;
  if (flag) {
    flag.textContent = board.dirty
      ? `${n} unsaved change${n === 1 ? '' : 's'} (kept in this browser): Save makes a new version` : 'Saved';
  }
  const back = r.querySelector('.undo');
  if (back) back.disabled = !undo.length;
  let t = 0;
  r.querySelectorAll('.scene').forEach((sec) => {
    const sc = board.scenes.find((x) => x.scene_id === sec.dataset.scene);
    if (!sc) return;
    const secs = sc.shots.reduce((a, s) => a + (parseFloat(s.duration) || 0), 0);
    const ids = sc.shots.filter((s) => !s.isNew).map((s) => s.shot_id);
    const range = ids.length ? `${ids[0]}${ids.length > 1 ? `–${ids[ids.length - 1]}` : ''} · ` : '';
    sec.querySelector('.scene-meta').textContent = `${range}${sc.shots.length} shot${sc.shots.length === 1 ? '' : 's'}`
      + ` · ${secs.toFixed(1)} s · ${clock(t)}–${clock(t + secs)}`;
    t += secs;
  });
}

// Find a shot by its id or by words of its prompt, narration, lines or sounds; Enter again goes to the next match.
function matches(q) {
  const k = q.trim().toLowerCase();
  if (!k) return [];
  const shots = allShots();
  const exact = shots.filter((s) => s.shot_id.toLowerCase() === k);
  const text = (s) => [s.shot_id, s.prompt, s.narration, s.sounds, ...(s.dialogue || []).map((l) => `${l.character} ${l.line}`)]
    .join(' ').toLowerCase();
  const words = k.split(/\s+/);
  return [...exact, ...shots.filter((s) => !exact.includes(s) && words.every((w) => text(s).includes(w)))];
}

function jump(q, say) {
  const hits = matches(q);
  if (!hits.length) { say(q.trim() ? 'No shot matches.' : ''); return; }
  found = { q, at: found.q === q ? (found.at + 1) % hits.length : 0 };
  const shot = hits[found.at];
  const [sc] = find(shot.shot_id);
  const sec = root().querySelector(`.scene[data-scene="${CSS.escape(sc.scene_id)}"]`);
  if (sec && (sec.hidden || folded.has(sc.scene_id))) {
    sec.hidden = false;
    folded.delete(sc.scene_id);
    fillScene(sec, sc);
  }
  const c = root().querySelector(`#card_${CSS.escape(shot.shot_id)}`);
  if (!c) return;
  c.scrollIntoView({ block: 'center' });
  root().querySelectorAll('.card.found').forEach((x) => x.classList.remove('found'));
  c.classList.add('found');
  say(`${shot.shot_id}${hits.length > 1 ? ` · ${found.at + 1} of ${hits.length} (Enter: next)` : ''}`);
}

function field(card, shot, cls, kind, label, opts) {
  const wrap = el('label', `f ${cls}`);
  if (label) wrap.appendChild(el('span', 'lbl', label));
  let input;
  if (kind === 'textarea') {
    input = el('textarea');
    input.rows = opts?.rows || 2;
  } else if (kind === 'select') {
    input = el('select');
    for (const c of opts.choices) {
      const o = el('option', '', c.replace(/_/g, ' '));
      o.value = c;
      input.appendChild(o);
    }
  } else {
    input = el('input');
    input.type = kind;
    Object.assign(input, opts || {});
  }
  const key = cls;
  if (kind === 'checkbox') input.checked = !!shot[key];
  else input.value = shot[key] ?? '';
  if (opts?.placeholder) input.placeholder = opts.placeholder;
  input.addEventListener(kind === 'checkbox' || kind === 'select' ? 'change' : 'input', () => {
    shot[key] = kind === 'checkbox' ? input.checked : kind === 'number' ? parseFloat(input.value) : input.value;
    commit(false);
  });
  wrap.appendChild(input);
  card.appendChild(wrap);
  return input;
}

// A shot's lines: speaker (a character, or nobody named; "off screen" when not in the shot), line, delivery.
// A line that takes longer to say than the shot lasts (2.5 words a second) is flagged, never cut.
const WORDS_PER_SECOND = 2.5;
const words = (t) => (t || '').trim().split(/\s+/).filter(Boolean).length;

function lineWarning(shot, ln) {
  const n = words(ln.line);
  const need = n / WORDS_PER_SECOND;
  return need > (shot.duration || 0)
    ? `too long for the shot: ${n} words take ${need.toFixed(1)} s to say, the shot lasts ${shot.duration} s` : '';
}

// ▶ on a line: the server voices the line as the card has it now (saved or not) through the render's own voicing
// and cache (a line the render spoke is played from the cache; board.py `playing`) and answers a URL.
async function playLine(ln, audio, heard) {
  const tell = (text, err) => { heard.textContent = text; heard.classList.toggle('err', !!err); };
  if (!(ln.line || '').trim()) { tell('Type the line first.', true); return; }
  tell(`Speaking as ${ln.character || 'the narrator'}…`);
  let got;
  try {
    got = await server.play_line({ project: board.project, version: board.version, character: ln.character || '',
      line: ln.line, delivery: ln.delivery || '' });
  } catch (e) {
    got = { error: 'the server did not answer: try again' };
  }
  if (!got || got.error) { tell((got && got.error) || 'no answer', true); return; }
  tell(got.made ? 'voiced now' : 'from the sound cache');
  audio.hidden = false;
  audio.src = got.url;
  audio.dataset.plays = String((parseInt(audio.dataset.plays || '0', 10) || 0) + 1);  // the same line again: same URL
  audio.play().catch(() => {});
}

function linesEditor(c, shot) {
  const shows = [];
  const box = el('div', 'lines');
  box.appendChild(el('span', 'lbl', 'Lines'));
  const speakers = [...new Set([...board.characters, ...shot.dialogue.map((ln) => ln.character).filter(Boolean)])];
  shot.dialogue.forEach((ln, i) => {
    const row = el('div', 'line');
    row.dataset.n = String(i + 1);
    const who = el('select', 'who');
    for (const name of ['', ...speakers]) {
      const o = el('option', '', name || '(nobody named)');
      o.value = name;
      who.appendChild(o);
    }
    who.value = ln.character || '';
    const off = el('span', 'off', '');
    const said = el('input', 'said');
    said.value = ln.line || '';
    said.placeholder = 'What they say';
    said.setAttribute('aria-label', 'What they say');
    const how = el('input', 'how');
    how.value = ln.delivery || '';
    how.placeholder = 'whispered …';
    how.setAttribute('aria-label', 'Delivery');
    how.title = 'How it is said';
    const warn = el('span', 'warn', '');
    const show = () => {
      off.textContent = ln.character && !shot.characters.includes(ln.character) ? 'off screen' : '';
      warn.textContent = lineWarning(shot, ln);
      row.classList.toggle('long', !!warn.textContent);
    };
    who.addEventListener('change', () => { ln.character = who.value; show(); commit(false); });
    said.addEventListener('input', () => { ln.line = said.value; show(); commit(false); });
    how.addEventListener('input', () => { ln.delivery = how.value; commit(false); });
    const heard = el('span', 'heard', '');
    const audio = el('audio', 'line-audio');
    audio.controls = true;
    audio.hidden = true;
    const play = el('button', 'mini play-line', '▶');
    play.type = 'button';
    play.title = 'Hear this line as the film speaks it: the speaker\'s voice, this delivery (unsaved words too)';
    play.addEventListener('click', () => playLine(ln, audio, heard));
    const drop = el('button', 'mini drop-line', '✕');
    drop.type = 'button';
    drop.title = 'Remove this line';
    drop.addEventListener('click', () => { shot.dialogue.splice(i, 1); commit(true); });
    row.append(who, off, said, el('span', 'lbl how-lbl', 'delivery'), how, play, drop, heard, warn, audio);
    show();
    shows.push(show);
    box.appendChild(row);
  });
  const add = el('button', 'mini add-line', 'Add a line');
  add.type = 'button';
  add.addEventListener('click', () => {
    shot.dialogue.push({ character: shot.characters.length === 1 ? shot.characters[0] : '', line: '', delivery: '' });
    commit(true);
  });
  box.appendChild(add);
  c.appendChild(box);
  return () => shows.forEach((show) => show());  // after the shot's length or characters change
}

function card(shot, scene) {
  const c = el('article', 'card');
  c.dataset.shot = shot.shot_id;
  c.id = `card_${shot.shot_id}`;
  c.draggable = true;
  if (shot.locked) c.classList.add('locked');
  const thumb = el('div', 'thumb');  // the approved keyframe, else the clip's thumbnail
  if (shot.thumb) {
    const img = el('img');
    img.src = shot.thumb;
    img.alt = `shot ${shot.shot_id}`;
    img.draggable = false;
    thumb.appendChild(img);
  } else {
    thumb.appendChild(el('span', 'none', 'no keyframe or clip yet'));
  }
  thumb.appendChild(el('span', 'sid', shot.isNew ? 'new shot' : shot.shot_id));
  if (shot.keyframe) thumb.appendChild(el('span', 'kf-badge', 'keyframe'));
  if (shot.tier === 'draft') {  // its clip as it stands is a draft: a film with it is a film of mixed tiers
    const badge = el('span', 'tier-badge', 'draft');
    badge.title = 'This shot\'s clip is a draft (a fast render): ✓ Finalize renders it at full quality';
    thumb.appendChild(badge);
  }
  c.dataset.tier = shot.tier || '';
  c.appendChild(thumb);
  c.appendChild(keyframeBar(shot));
  // every field keeps a label above it (a placeholder alone goes once the field is filled)
  field(c, shot, 'prompt', 'textarea', 'Picture', { rows: 3, placeholder: 'What the shot shows' });
  const row = el('div', 'row');
  c.appendChild(row);
  const length = field(row, shot, 'duration', 'number', 'Length (s)', { min: 0.5, max: 60, step: 0.5 });
  let refreshLines = () => {};
  field(row, shot, 'camera', 'select', 'Camera', { choices: board.cameras });
  if (board.characters.length) {
    const chips = el('div', 'chars');
    for (const name of board.characters) {
      const b = el('button', 'chip', name);
      b.type = 'button';
      b.classList.toggle('on', shot.characters.includes(name));
      b.addEventListener('click', () => {
        shot.characters = shot.characters.includes(name)
          ? shot.characters.filter((n) => n !== name) : [...shot.characters, name];
        b.classList.toggle('on');
        refreshLines();
        commit(false);
      });
      chips.appendChild(b);
    }
    c.appendChild(chips);
  }
  field(c, shot, 'narration', 'textarea', 'Narration', { rows: 1, placeholder: 'Voice-over, subtitled' });
  refreshLines = linesEditor(c, shot);
  length.addEventListener('input', () => refreshLines());
  field(c, shot, 'sounds', 'textarea', 'Sounds', { rows: 1, placeholder: 'Effects, ambience' });
  field(c, shot, 'description', 'textarea', 'Description', {
    rows: 1, placeholder: 'What is seen, said between the lines on the described track',
  });
  const flags = el('div', 'row flags');
  c.appendChild(flags);
  field(flags, shot, 'locked', 'checkbox', 'Locked');
  field(flags, shot, 'continuity', 'checkbox', 'Continues the shot before');
  const more = el('details', 'more');
  more.appendChild(el('summary', '', 'More'));
  field(more, shot, 'negative_prompt', 'textarea', 'Avoid (negative prompt)', { rows: 1 });
  const seedRow = el('div', 'row');
  more.appendChild(seedRow);
  const seed = field(seedRow, shot, 'seed', 'number', 'Seed', { min: 0, step: 1 });
  const reseed = el('button', 'mini', 'New seed');
  reseed.type = 'button';
  reseed.addEventListener('click', () => { shot.seed = Math.floor(Math.random() * 2147483647); seed.value = shot.seed; commit(false); });
  seedRow.appendChild(reseed);
  c.appendChild(more);
  const actions = el('div', 'actions');  // per-shot actions
  const act = (label, name, title, fn) => {
    const b = el('button', `act ${name}`, label);
    b.type = 'button';
    b.title = title;
    b.addEventListener('click', fn);
    actions.appendChild(b);
  };
  act('▶ Play', 'play', 'Play this shot\'s clip', () => send('play', { shot_id: shot.shot_id }));
  act('⟳ Render shot', 'rerender', 'Render this shot as it stands now, at the tier chosen above (the film is not re-cut)',
    () => send('render_shot', { shot_id: shot.shot_id }));
  if (shot.tier === 'draft') {
    act('✓ Finalize', 'finalize', 'Render this shot at full quality with the draft\'s seed, keyframe and take, and cut '
      + 'the film again', () => finalize({ shot_id: shot.shot_id }, shot.isNew));
  }
  act('↑', 'up', 'Move earlier', () => move(shot.shot_id, -1));
  act('↓', 'down', 'Move later', () => move(shot.shot_id, 1));
  act('Duplicate', 'dup', 'Duplicate this shot', () => {
    const [sc, i] = find(shot.shot_id);
    sc.shots.splice(i + 1, 0, { ...structuredClone(shot), shot_id: freshId(), isNew: true, thumb: '', seed: newSeed(),
      locked: false, keyframe: '', candidates: [], takes: null, tier: '' });
    commit(true);
  });
  act('Add after', 'add', 'Add a shot after this one', () => {
    const [sc, i] = find(shot.shot_id);
    sc.shots.splice(i + 1, 0, blank());
    commit(true);
  });
  act('Delete', 'del', 'Delete this shot', () => {
    if (allShots().length === 1) return;
    const [sc, i] = find(shot.shot_id);
    sc.shots.splice(i, 1);
    board.scenes = board.scenes.filter((s) => s.shots.length);
    commit(true);
    note(`Shot ${shot.isNew ? '(new)' : shot.shot_id} deleted: ↶ Undo brings it back.`);
  });
  c.appendChild(actions);
  c.appendChild(takesArea(shot));
  c.addEventListener('dragstart', (ev) => {
    dragged = shot.shot_id;
    c.classList.add('dragging');
    ev.dataTransfer.effectAllowed = 'move';
    ev.dataTransfer.setData('text/plain', shot.shot_id);
  });
  c.addEventListener('dragend', () => { c.classList.remove('dragging'); dragged = null; });
  c.addEventListener('dragover', (ev) => { if (dragged) { ev.preventDefault(); c.classList.add('over'); } });
  c.addEventListener('dragleave', () => c.classList.remove('over'));
  c.addEventListener('drop', (ev) => {
    ev.preventDefault();
    c.classList.remove('over');
    const id = dragged || ev.dataTransfer.getData('text/plain');
    if (!id || id === shot.shot_id) return;
    const box = c.getBoundingClientRect();
    const after = ev.clientX > box.left + box.width / 2;
    const [from, i] = find(id);
    const moving = from.shots.splice(i, 1)[0];
    const [to, j] = find(shot.shot_id);
    to.shots.splice(after ? j + 1 : j, 0, moving);
    board.scenes = board.scenes.filter((s) => s.shots.length);
    commit(true);
  });
  return c;
}

function blank() {
  return { shot_id: freshId(), isNew: true, prompt: '', negative_prompt: '', duration: 3, seed: newSeed(),
    camera: 'static', narration: '', dialogue: [], sounds: '', description: '', characters: [], locked: false,
    continuity: false, thumb: '', tier: '',
    keyframe: '', candidates: [], takes: null };
}

function move(id, delta) {
  const shots = allShots();
  const k = shots.findIndex((s) => s.shot_id === id);
  const target = shots[k + delta];
  if (!target) return;
  const [sc, i] = find(id);
  const moving = sc.shots.splice(i, 1)[0];
  const [to, j] = find(target.shot_id);
  to.shots.splice(delta > 0 ? j + 1 : j, 0, moving);
  board.scenes = board.scenes.filter((s) => s.shots.length);
  commit(true);
}

// A scene's cards, made when the scene is unfolded (a folded scene costs nothing).
function fillScene(sec, sc) {
  const cards = sec.querySelector('.cards');
  const fold = sec.querySelector('.fold');
  const open = !folded.has(sc.scene_id);
  fold.textContent = open ? '▾' : '▸';
  fold.title = open ? 'Fold this scene' : 'Unfold this scene';
  fold.setAttribute('aria-expanded', String(open));
  cards.hidden = !open;
  if (open && !cards.childElementCount) sc.shots.forEach((shot) => cards.appendChild(card(shot, sc)));
  if (!open) cards.replaceChildren();
}

// The field being typed in, as an address that outlives a redraw: its card, scene header or the board's head, and its
// place among that box's fields. A redraw (the server's answer to a tab switch arriving just after Undo, a card's
// button) replaces every input; the person typing keeps the field, the caret and the keys they press next, which
// would otherwise go to no element at all (issue 57.9: an edit typed right after Undo never counted).
const FIELDS = 'input, textarea, select';
function typingAt(r) {
  const a = document.activeElement;
  if (!a || !r.contains(a) || !a.matches(FIELDS)) return null;
  const box = a.closest('.card, .scene > header, .sb-head');
  if (!box) return null;
  const where = box.classList.contains('card') ? `#${CSS.escape(box.id)}`
    : box.tagName === 'HEADER' ? `.scene[data-scene="${CSS.escape(box.parentElement.dataset.scene)}"] > header` : '.sb-head';
  const at = { where, n: [...box.querySelectorAll(FIELDS)].indexOf(a), tag: a.tagName, cls: a.className, was: a };
  try {
    Object.assign(at, { start: a.selectionStart, end: a.selectionEnd, dir: a.selectionDirection });
  } catch (e) { /* a field with no caret (a number, a select) */ }
  return at;
}

function typeOn(r, at) {
  const box = at && r.querySelector(at.where);
  const a = box && box.querySelectorAll(FIELDS)[at.n];
  if (!a || a.tagName !== at.tag || a.className !== at.cls) return;
  a.focus({ preventScroll: true });
  if (lastField === at.was) lastField = a;  // typing on in the same field is the same step of Undo
  if (typeof at.start === 'number' && at.start !== null) {
    try { a.setSelectionRange(at.start, at.end, at.dir || 'none'); } catch (e) { /* no caret here */ }
  }
}

function draw() {
  const r = root();
  const y = window.scrollY;
  const typing = r && typingAt(r);
  if (!clear(r, board)) return;
  const head = el('div', 'sb-head');
  const search = el('input', 'find');
  search.type = 'search';
  search.placeholder = 'Find a shot: s080 or words';
  search.title = 'A shot id or words from its prompt, narration, lines or sounds; Enter jumps to it (again: the next)';
  const said = el('span', 'found-note');
  search.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') { ev.preventDefault(); jump(search.value, (t) => { said.textContent = t; }); }
  });
  head.appendChild(search);
  head.appendChild(said);
  const all = el('button', 'mini fold-all', 'Fold all');
  all.type = 'button';
  all.title = 'Fold every scene (or unfold them all)';
  all.addEventListener('click', () => {
    const fold = folded.size < board.scenes.length;
    board.scenes.forEach((sc) => (fold ? folded.add(sc.scene_id) : folded.delete(sc.scene_id)));
    draw();
  });
  head.appendChild(all);
  head.appendChild(el('span', 'note'));
  button(head, '↶ Undo', 'mini undo', 'Undo the last edit (Ctrl+Z outside a text field)', stepBack);
  head.appendChild(el('span', 'dirty'));
  const filter = board.scene_filter || '';
  r.appendChild(head);
  board.scenes.forEach((sc, n) => {
    const sec = el('section', 'scene');
    sec.dataset.scene = sc.scene_id;
    if (filter && filter !== sc.scene_id) sec.hidden = true;
    const h = el('header');
    const fold = el('button', 'fold');
    fold.type = 'button';
    fold.addEventListener('click', () => {
      if (folded.has(sc.scene_id)) folded.delete(sc.scene_id);
      else folded.add(sc.scene_id);
      fillScene(sec, sc);
    });
    h.appendChild(fold);
    h.appendChild(el('span', 'scene-no', `Scene ${n + 1}`));
    const title = el('input', 'scene-title');
    title.value = sc.title || '';
    title.placeholder = 'Scene title';
    title.setAttribute('aria-label', 'Scene title');
    title.addEventListener('input', () => { sc.title = title.value; commit(false); });
    h.appendChild(title);
    const music = el('input', 'scene-music');
    music.value = sc.music || '';
    music.placeholder = 'Music cue (mood, tempo, instruments), or none';
    music.title = 'The scene\'s music, in words';
    music.setAttribute('aria-label', 'Music cue');
    music.addEventListener('input', () => { sc.music = music.value; commit(false); });
    h.appendChild(music);
    h.appendChild(trackControl(sc));
    const drafts = sc.shots.filter((s) => s.tier === 'draft').length;
    if (drafts && !sc.isNew) {
      button(h, `✓ Finalize scene (${drafts} draft${drafts > 1 ? 's' : ''})`, 'mini scene-finalize',
        'Render this scene\'s shots at full quality with their drafts\' seeds, keyframes and takes, and cut the film again',
        () => finalize({ scene_id: sc.scene_id }, sc.isNew));
    }
    h.appendChild(el('span', 'scene-meta'));
    sec.appendChild(h);
    sec.appendChild(el('div', 'cards'));
    fillScene(sec, sc);
    r.appendChild(sec);
  });
  const addScene = el('button', 'add-scene', 'Add a scene');
  addScene.type = 'button';
  addScene.addEventListener('click', () => {
    board.scenes.push({ scene_id: freshId(), isNew: true, title: '', music: '', shots: [blank()] });
    commit(true);
  });
  r.appendChild(addScene);
  mark();
  typeOn(r, typing);
  if (window.scrollY !== y) window.scrollTo(0, y);
}

// Each shot of `scenes` shows the pictures, keyframes and takes `from` has for it (a new shot: none yet).
function withMedia(scenes, from) {
  const media = new Map(from.scenes.flatMap((sc) => sc.shots).map((s) => [s.shot_id, s]));
  for (const sc of scenes) {
    for (const s of sc.shots || []) {
      const now = media.get(s.shot_id);
      Object.assign(s, now && !s.isNew
        ? { thumb: now.thumb, tier: now.tier, keyframe: now.keyframe, candidates: now.candidates, takes: now.takes }
        : { thumb: '', tier: '', keyframe: '', candidates: [], takes: null });
    }
  }
}

// Unsaved edits kept in this browser for this version, on the board the server sent (its pictures, keyframes and
// takes are the server's: the draft brings back only what the cards edit).
function restore() {
  let draft = null;
  try {
    draft = JSON.parse(localStorage.getItem(DRAFT + board.key) || 'null');
  } catch (e) {
    draft = null;
  }
  if (!Array.isArray(draft?.scenes)) return null;
  withMedia(draft.scenes, board);
  const tracks = new Map(board.scenes.map((sc) => [sc.scene_id, !!sc.track]));  // the server's: a track is saved
  board.scenes = draft.scenes.filter((sc) => Array.isArray(sc.shots) && sc.shots.length);
  board.scenes.forEach((sc) => { sc.track = tracks.get(sc.scene_id) || false; });
  return Array.isArray(draft.undo) ? draft.undo.filter((u) => typeof u === 'string') : [];
}

// A board from the server is an answer to something asked earlier; edits made since are never lost to it. Typing
// not yet sent is kept with the draft first (the saved version it brings is read with the draft, see `restore`), and
// a draft sent back (a shot rendered from unsaved edits) brings only its pictures when the board was edited since.
function load() {
  const v = props.value;
  if (v === lastJson) return;  // our own edit coming back
  let next = null;
  try {
    next = v ? JSON.parse(v) : null;
  } catch (e) {
    next = null;
  }
  const typing = pending !== null && board !== null;
  if (typing) { clearTimeout(pending); pending = null; keepDraft(changes()); }
  if (next?.dirty && board?.key === next.key && (typing || next.rev !== board.rev)) {
    withMedia(board.scenes, next);
    draw();
    flush();
    return;
  }
  lastJson = v;
  board = next;
  if (!board) { base = null; undo = []; draw(); return; }
  if (board.open_takes) openTakes.add(board.open_takes);
  if (board.carried_from && board.key && board.carried_from !== board.key) {
    // a track was placed on the saved version: the unsaved edits go on over the version it made (Undo starts anew)
    try {
      const kept = JSON.parse(localStorage.getItem(DRAFT + board.carried_from) || 'null');
      if (kept) localStorage.setItem(DRAFT + board.key, JSON.stringify({ ...kept, undo: [] }));
      localStorage.removeItem(DRAFT + board.carried_from);
    } catch (e) { /* storage blocked: nothing kept */ }
  }
  if (board.saved_from) {  // saved: the draft it came from is done with
    try { localStorage.removeItem(DRAFT + board.saved_from); } catch (e) { /* storage blocked: nothing kept */ }
  }
  const same = base?.key === board.key;  // the same version again (a tab switch): its Undo steps stay
  if (!board.dirty || !same) {  // a saved version (a dirty board is a draft sent back)
    base = baseOf(board);
    if (!same) undo = [];
  }
  const steps = !board.dirty && board.key ? restore() : null;
  const back = steps !== null;
  // after a reload, Undo steps back through the edits kept with the draft, the last step to the saved version
  if (back && !same) undo = steps.length ? steps : [v];
  // the board shown is the draft from now on: a key pressed before the flush below is undone to it, not to the
  // saved version (input runs before timers on a busy page)
  if (back) lastJson = JSON.stringify(board);
  draw();
  if (back) {
    setTimeout(() => {
      flush();
      if (board.changes) note(`Your ${board.changes} unsaved change${board.changes === 1 ? '' : 's'} came back (kept in this browser).`);
    }, 0);
  } else {
    board.changes = board.dirty ? changes() : 0;
    mark();
  }
}

// Ctrl+Z outside a text field undoes the board's last edit; leaving the page with unsaved edits asks first.
document.addEventListener('keydown', (ev) => {
  if (!board || !root()?.offsetParent) return;  // the Storyboard tab is not shown
  if ((ev.ctrlKey || ev.metaKey) && !ev.shiftKey && ev.key === 'z' && !ev.target.closest?.('input, textarea, select')) {
    ev.preventDefault();
    stepBack();
  }
});
// The board is sent before Save is clicked, and before another field is edited (so Undo steps back one field at a time).
document.addEventListener('pointerdown', () => { if (pending) flush(); }, true);
element.addEventListener('focusin', () => { if (pending) flush(); });
// Asked before Gradio's own listener (capture runs first on the window): Gradio closes its client on every
// 'beforeunload', even when the person then stays, and the page's next event (Save) could get no answer. When we ask,
// Gradio's listener is not run; a page that does leave closes its connection anyway.
window.addEventListener('beforeunload', (ev) => {
  if (pending) flush();
  if (board?.dirty) { ev.preventDefault(); ev.returnValue = ''; ev.stopImmediatePropagation(); }
}, { capture: true });

watch('value', load);
load();
