// The storyboard editor: scenes of shot cards, edited in place, dragged to reorder; each card's keyframe (draw,
// re-roll, upload, pick an earlier one, clear) and takes (render, watch side by side, the panel's votes, use one).
// `props.value` is the board as JSON (see app/ui/storyboard.py `board_json`); every edit writes it back, and
// the Save button sends it. Card buttons send a 'card' event (app/ui/board_media.py `CardAction`); uploads go
// through `pictureInput` (kit.js, prepended with `el`).
// Text is set with .value/.textContent only: nothing from the board becomes HTML.
let board = null;
let lastJson = null;
let dragged = null;
let nextNew = 1;
const openTakes = new Set();  // shots whose takes are shown (kept across redraws)

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

function commit(rerender) {
  board.dirty = true;
  lastJson = JSON.stringify(board);
  props.value = lastJson;
  if (rerender) draw();
  else mark();
}

function note(text) {
  const n = root()?.querySelector('.note');
  if (n) n.textContent = text;
}

// Keyframes and takes are made from the saved version: ask only when the board has no unsaved edits.
function cardAction(shot, data) {
  if (board.dirty || shot.isNew) {
    note('Save the storyboard first: keyframes and takes are made from the saved version.');
    return;
  }
  note('');
  trigger('card', { shot_id: shot.shot_id, ...data });
}

function button(parent, label, cls, title, fn) {
  const b = el('button', cls, label);
  b.type = 'button';
  b.title = title;
  b.addEventListener('click', (ev) => { ev.stopPropagation(); fn(); });
  parent.appendChild(b);
  return b;
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
      () => cardAction(shot, { action: 'reroll' }));
  } else {
    button(row, '✦ Draw keyframe', 'mini kf-draw', 'Draw a keyframe for this shot: the clip will start from it',
      () => cardAction(shot, { action: 'draw' }));
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

function mark() {
  const r = root();
  if (!r) return;
  r.dataset.dirty = board.dirty ? 'yes' : 'no';
  const flag = r.querySelector('.dirty');
  if (flag) flag.textContent = board.dirty ? 'Unsaved changes: Save makes a new version' : 'Saved';
  r.querySelectorAll('.scene').forEach((sec) => {
    const sc = board.scenes.find((x) => x.scene_id === sec.dataset.scene);
    if (!sc) return;
    const secs = sc.shots.reduce((a, s) => a + (parseFloat(s.duration) || 0), 0);
    sec.querySelector('.scene-meta').textContent = `${sc.shots.length} shot(s) · ${secs.toFixed(1)} s`;
  });
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
    const how = el('input', 'how');
    how.value = ln.delivery || '';
    how.placeholder = 'Delivery (whispered …)';
    const warn = el('span', 'warn', '');
    const show = () => {
      off.textContent = ln.character && !shot.characters.includes(ln.character) ? 'off screen' : '';
      warn.textContent = lineWarning(shot, ln);
      row.classList.toggle('long', !!warn.textContent);
    };
    who.addEventListener('change', () => { ln.character = who.value; show(); commit(false); });
    said.addEventListener('input', () => { ln.line = said.value; show(); commit(false); });
    how.addEventListener('input', () => { ln.delivery = how.value; commit(false); });
    const drop = el('button', 'mini drop-line', '✕');
    drop.type = 'button';
    drop.title = 'Remove this line';
    drop.addEventListener('click', () => { shot.dialogue.splice(i, 1); commit(true); });
    row.append(who, off, said, how, drop, warn);
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
  c.appendChild(thumb);
  c.appendChild(keyframeBar(shot));
  field(c, shot, 'prompt', 'textarea', '', { rows: 3, placeholder: 'What the shot shows' });
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
  field(c, shot, 'narration', 'textarea', '', { rows: 1, placeholder: 'Narration (voice-over, subtitled)' });
  refreshLines = linesEditor(c, shot);
  length.addEventListener('input', () => refreshLines());
  field(c, shot, 'sounds', 'textarea', '', { rows: 1, placeholder: 'Sounds (effects, ambience)' });
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
  act('▶ Play', 'play', 'Play this shot\'s clip', () => trigger('play', { shot_id: shot.shot_id }));
  act('⟳ Render shot', 'rerender', 'Render this shot as it stands now (the film is not re-cut)',
    () => trigger('render_shot', { shot_id: shot.shot_id }));
  act('↑', 'up', 'Move earlier', () => move(shot.shot_id, -1));
  act('↓', 'down', 'Move later', () => move(shot.shot_id, 1));
  act('Duplicate', 'dup', 'Duplicate this shot', () => {
    const [sc, i] = find(shot.shot_id);
    sc.shots.splice(i + 1, 0, { ...structuredClone(shot), shot_id: freshId(), isNew: true, thumb: '', seed: newSeed(),
      locked: false, keyframe: '', candidates: [], takes: null });
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
    camera: 'static', narration: '', dialogue: [], sounds: '', characters: [], locked: false, continuity: false, thumb: '',
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

function draw() {
  const r = root();
  if (!clear(r, board)) return;
  const head = el('div', 'sb-head');
  head.appendChild(el('span', 'note'));
  head.appendChild(el('span', 'dirty'));
  const filter = board.scene_filter || '';
  r.appendChild(head);
  board.scenes.forEach((sc, n) => {
    const sec = el('section', 'scene');
    sec.dataset.scene = sc.scene_id;
    if (filter && filter !== sc.scene_id) sec.hidden = true;
    const h = el('header');
    h.appendChild(el('span', 'scene-no', `Scene ${n + 1}`));
    const title = el('input', 'scene-title');
    title.value = sc.title || '';
    title.placeholder = 'Scene title';
    title.addEventListener('input', () => { sc.title = title.value; commit(false); });
    h.appendChild(title);
    const music = el('input', 'scene-music');
    music.value = sc.music || '';
    music.placeholder = 'Music cue (mood, tempo, instruments), or none';
    music.title = 'The scene\'s music, in words';
    music.addEventListener('input', () => { sc.music = music.value; commit(false); });
    h.appendChild(music);
    h.appendChild(el('span', 'scene-meta'));
    sec.appendChild(h);
    const cards = el('div', 'cards');
    sc.shots.forEach((shot) => cards.appendChild(card(shot, sc)));
    sec.appendChild(cards);
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
}

function load() {
  const v = props.value;
  if (v === lastJson) return;  // our own edit coming back
  lastJson = v;
  try {
    board = v ? JSON.parse(v) : null;
  } catch (e) {
    board = null;
  }
  if (board?.open_takes) openTakes.add(board.open_takes);
  draw();
}

watch('value', load);
load();
