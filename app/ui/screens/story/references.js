// The bible's cards: a card per character and location with its reference thumbnails, and Upload, Generate
// and Clear; a character's card also says what they are and shows their voice in words, with pitch, pace and
// speaker (and the engine when a speech endpoint is set) to change, ▶ to hear a line in the voice the controls
// set (`server.preview_voice`, nothing stored) and "Use this voice" (a new version). `props.value` is JSON
// (references.py `refs_json`); buttons send a 'reference' event; uploads go through `pictureInput`
// (kit.js).
// Text is set with .textContent only: nothing from the storyboard becomes HTML.
const { el, clear } = window.chiefKit;  // kit.js, loaded once into the page by the component's `head`
const pictureInput = (...args) => window.chiefKit.pictureInput(upload, ...args);
let data = null;
let last = null;

const root = () => element.querySelector('.refs');

function say(text) {
  const n = root()?.querySelector('.note');
  if (n) n.textContent = text;
}

function button(parent, label, cls, title, fn) {
  const b = el('button', cls, label);
  b.type = 'button';
  b.title = title;
  b.addEventListener('click', fn);
  parent.appendChild(b);
  return b;
}

// A reference change that re-renders clips (a backend that takes references: the first one of each character is
// part of its shots' clip keys) says how many and asks first (the server's count, `affects`); no: nothing is sent.
function ask(s, action, extra) {
  const a = s.affects?.[action === 'clear' ? 'clear' : 'add'];
  if (a && a.shots.length && !window.confirm(`${a.text}. Go on?`)) {
    say('Nothing changed.');
    return;
  }
  say('');
  trigger('reference', { name: s.name, location: s.location, action, ...extra });
}

function field(parent, label, input, title) {
  const l = el('label', 'vfield');
  l.title = title;
  l.appendChild(el('span', '', label));
  l.appendChild(input);
  parent.appendChild(l);
  return input;
}

function number(cls, value, min, max, step) {
  const n = el('input', cls);
  n.type = 'number';
  Object.assign(n, { min, max, step, value: String(value) });
  return n;
}

function voiceBox(s, c) {
  const v = s.voice;
  const box = el('div', 'voice');
  const said = el('div', 'voice-words');
  said.appendChild(el('b', '', 'Voice: '));
  said.appendChild(document.createTextNode(v.words));
  box.appendChild(said);
  const row = el('div', 'voice-controls');
  let engine = null;
  if (data.speech) {
    engine = el('select', 'voice-engine');
    [['piper', 'Piper (offline)'], ['speech', 'speech endpoint']].forEach(([k, label]) => {
      const o = el('option', '', label);
      o.value = k;
      engine.appendChild(o);
    });
    engine.value = v.engine;
    field(row, 'engine', engine, 'Piper speaks offline; the speech endpoint is the server set in Settings');
  }
  const pitch = field(row, 'pitch', number('voice-pitch', v.pitch, -12, 12, 0.5), 'Pitch shift in semitones (-12 to +12)');
  const pace = field(row, 'pace', number('voice-pace', v.pace, 0.5, 2, 0.05), 'Speaking pace: above 1 is faster (0.5 to 2)');
  const speaker = el('input', 'voice-speaker');
  speaker.value = v.speaker;
  speaker.maxLength = 80;
  speaker.placeholder = data.speech ? 'e.g. alloy' : 'default';
  field(row, 'speaker', speaker, "A Piper speaker number (voices with several speakers) or the speech endpoint's voice name");
  box.appendChild(row);
  const note = el('div', 'voice-note');
  const tell = (text, err) => { note.textContent = text; note.classList.toggle('err', !!err); };
  const chosen = () => {
    const out = { pitch: parseFloat(pitch.value), pace: parseFloat(pace.value), speaker: speaker.value.trim() };
    if (engine) out.engine = engine.value;
    if (Number.isNaN(out.pitch) || Number.isNaN(out.pace)) return null;
    return out;
  };
  const acts = el('div', 'acts');
  const audio = el('audio', 'voice-preview');
  audio.controls = true;
  audio.hidden = true;
  button(acts, '▶ Preview', 'mini voice-play', 'Hear a line in the voice these controls set (nothing is kept)', async () => {
    const voice = chosen();
    if (!voice) { tell('Pitch and pace must be numbers.', true); return; }
    tell(`Speaking as ${s.name}…`);
    let got;
    try {
      got = await server.preview_voice({ project: data.project, version: data.version, name: s.name, voice });
    } catch (e) {
      got = { error: 'the server did not answer: try again' };
    }
    if (!got || got.error) { tell((got && got.error) || 'no answer', true); return; }
    tell('');
    audio.hidden = false;
    audio.src = got.url;
    audio.play().catch(() => {});
  });
  button(acts, 'Use this voice', 'mini voice-use', `Keep this voice for ${s.name} (a new version; only their lines are voiced again)`, () => {
    const voice = chosen();
    if (!voice) { tell('Pitch and pace must be numbers.', true); return; }
    ask(s, 'voice', { voice });
  });
  box.appendChild(acts);
  box.appendChild(audio);
  box.appendChild(note);
  c.appendChild(box);
}

// A character's name and description, edited on the card: "Save" (shown once either changes) makes a version
// (a rename follows the character into their shots and lines); "Remove" asks first.
function bibleEntry(s, c, head) {
  const name = el('input', 'char-name');
  name.value = s.name;
  name.maxLength = 80;
  name.setAttribute('aria-label', 'name');
  const desc = el('textarea', 'char-desc');
  desc.value = s.description;
  desc.maxLength = 1000;
  desc.rows = 2;
  desc.placeholder = 'How they look, every time they appear';
  desc.setAttribute('aria-label', `how ${s.name} looks`);
  const row = el('div', 'acts entry-acts');
  const save = button(row, '✓ Save', 'mini char-save', 'Keep the new name or description (a new version)', () => {
    ask(s, 'describe', { new_name: name.value, description: desc.value });
  });
  save.hidden = true;
  const dirty = () => { save.hidden = name.value === s.name && desc.value === s.description; };
  name.addEventListener('input', dirty);
  desc.addEventListener('input', dirty);
  button(row, '✕ Remove', 'mini char-remove', `Take ${s.name} out of the bible (a new version)`, () => {
    if (window.confirm(`Remove ${s.name} from the character bible? (a new version; History keeps this one)`)) ask(s, 'remove');
  });
  head.prepend(name);
  c.appendChild(desc);
  c.appendChild(row);
}

function addCard() {
  const c = el('article', 'subject add-character');
  c.id = 'ref_add_character';
  c.appendChild(el('b', 'name', 'A new character'));
  const name = el('input', 'char-name');
  name.placeholder = 'Name';
  name.maxLength = 80;
  const desc = el('textarea', 'char-desc');
  desc.placeholder = 'How they look, every time they appear';
  desc.maxLength = 1000;
  desc.rows = 2;
  c.appendChild(name);
  c.appendChild(desc);
  const row = el('div', 'acts');
  button(row, '+ Add', 'mini char-add', 'Add them to the bible (a new version)', () => {
    say('');
    trigger('reference', { name: '(new)', action: 'add', new_name: name.value, description: desc.value });
  });
  c.appendChild(row);
  return c;
}

function subjectCard(s, i) {
  const kind = s.location ? 'location' : 'character';
  const c = el('article', 'subject');
  c.id = `ref_${kind}_${i}`;
  c.dataset.name = s.name;
  const head = el('header');
  if (s.location) head.appendChild(el('b', 'name', s.name));
  head.appendChild(el('span', 'kind', s.location ? kind : s.what || kind));
  head.appendChild(el('span', 'count', `${s.refs.length}/${data.max_refs} pictures`)).title = `${s.refs.length} reference pictures of ${data.max_refs} at most`;
  c.appendChild(head);
  if (s.location) c.appendChild(el('p', 'desc', s.description));
  else bibleEntry(s, c, head);
  const pics = el('div', 'pics');
  if (s.refs.length) {
    s.refs.forEach((url, k) => {
      const im = el('img');
      im.src = url;
      im.alt = `${s.name}, reference ${k + 1}`;
      pics.appendChild(im);
    });
  } else {
    pics.appendChild(el('span', 'none', 'no reference yet'));
  }
  c.appendChild(pics);
  const row = el('div', 'acts');
  const file = pictureInput('ref-file', data.max_upload, say, (path) => ask(s, 'upload', { path }));
  row.appendChild(file);
  const full = s.refs.length >= data.max_refs;
  button(row, '⤒ Upload', 'mini ref-upload', 'Add a picture of yours (PNG, JPEG or WebP)', () => file.click()).disabled = full;
  button(row, '✦ Generate', 'mini ref-generate', 'Draw a reference from the description', () => ask(s, 'generate'))
    .disabled = full;
  if (s.refs.length) button(row, '✕ Clear', 'mini ref-clear', 'Remove every reference of this one', () => ask(s, 'clear'));
  c.appendChild(row);
  if (!s.location) voiceBox(s, c);
  return c;
}

function draw() {
  const r = root();
  if (!clear(r, data)) return;
  const head = el('div', 'refs-head');
  head.appendChild(el('span', 'note', data.note || ''));
  head.appendChild(el('span', 'images', `Generated by ${data.images}`));
  r.appendChild(head);
  const grid = el('div', 'subjects');
  const counts = { true: 0, false: 0 };
  data.subjects.filter((s) => !s.location).forEach((s) => { grid.appendChild(subjectCard(s, counts[s.location]++)); });
  grid.appendChild(addCard());
  data.subjects.filter((s) => s.location).forEach((s) => { grid.appendChild(subjectCard(s, counts[s.location]++)); });
  r.appendChild(grid);
}

function load() {
  const v = props.value;
  if (v === last) return;
  last = v;
  try {
    data = v ? JSON.parse(v) : null;
  } catch (e) {
    data = null;
  }
  draw();
}

watch('value', load);
load();
