// The storyboard editor: scenes of shot cards, edited in place, dragged to reorder.
// `props.value` is the board as JSON (see app/ui/storyboard.py `board_json`); every edit writes it back, and
// the Save button sends it. Text is set with .value/.textContent only: nothing from the board becomes HTML.
let board = null;
let lastJson = null;
let dragged = null;
let nextNew = 1;

const root = () => element.querySelector('.sb');
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
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

function card(shot, scene) {
  const c = el('article', 'card');
  c.dataset.shot = shot.shot_id;
  c.id = `card_${shot.shot_id}`;
  c.draggable = true;
  if (shot.locked) c.classList.add('locked');
  const thumb = el('div', 'thumb');  // the slot a keyframe will fill; today: the clip's thumbnail
  if (shot.thumb) {
    const img = el('img');
    img.src = shot.thumb;
    img.alt = `shot ${shot.shot_id}`;
    img.draggable = false;
    thumb.appendChild(img);
  } else {
    thumb.appendChild(el('span', 'none', 'not rendered yet'));
  }
  thumb.appendChild(el('span', 'sid', shot.isNew ? 'new shot' : shot.shot_id));
  c.appendChild(thumb);
  field(c, shot, 'prompt', 'textarea', '', { rows: 3, placeholder: 'What the shot shows' });
  const row = el('div', 'row');
  c.appendChild(row);
  field(row, shot, 'duration', 'number', 'Length (s)', { min: 0.5, max: 60, step: 0.5 });
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
        commit(false);
      });
      chips.appendChild(b);
    }
    c.appendChild(chips);
  }
  field(c, shot, 'narration', 'textarea', '', { rows: 1, placeholder: 'Narration (voice-over, subtitled)' });
  const flags = el('div', 'row flags');
  c.appendChild(flags);
  field(flags, shot, 'locked', 'checkbox', 'Locked');
  field(flags, shot, 'continuity', 'checkbox', 'Continues the shot before');
  const more = el('details', 'more');
  more.appendChild(el('summary', '', 'More'));
  field(more, shot, 'dialogue', 'textarea', 'Dialogue', { rows: 1 });
  field(more, shot, 'negative_prompt', 'textarea', 'Avoid (negative prompt)', { rows: 1 });
  const seedRow = el('div', 'row');
  more.appendChild(seedRow);
  const seed = field(seedRow, shot, 'seed', 'number', 'Seed', { min: 0, step: 1 });
  const reseed = el('button', 'mini', 'New seed');
  reseed.type = 'button';
  reseed.addEventListener('click', () => { shot.seed = Math.floor(Math.random() * 2147483647); seed.value = shot.seed; commit(false); });
  seedRow.appendChild(reseed);
  c.appendChild(more);
  const actions = el('div', 'actions');  // per-shot actions; takes will join them
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
    sc.shots.splice(i + 1, 0, { ...structuredClone(shot), shot_id: freshId(), isNew: true, thumb: '', seed: newSeed(), locked: false });
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
  c.appendChild(el('div', 'takes-slot'));
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
    camera: 'static', narration: '', dialogue: '', characters: [], locked: false, continuity: false, thumb: '' };
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
  r.replaceChildren();
  if (!board) {
    r.appendChild(el('p', 'empty', 'Open or create a project first (Projects tab).'));
    return;
  }
  const head = el('div', 'sb-head');
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
    board.scenes.push({ scene_id: freshId(), isNew: true, title: '', shots: [blank()] });
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
  draw();
}

watch('value', load);
load();
