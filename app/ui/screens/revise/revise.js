// The review of a proposal: one compact row per edit (thumbnail, word diff, why, sources), accept or reject each
// or all, edit a new value in place, commit once. `props.value` is the proposal as JSON (values.py
// `review_json`); decisions are written back into it. Text goes in with .textContent/.value only.
let review = null;
let lastJson = null;
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

function save() {
  lastJson = JSON.stringify(review);
  props.value = lastJson;
  state();
}

function changed() {
  return review.edits.some((e) => e.accept);
}

function state() {
  const root = element.querySelector('.review');
  const btn = root.querySelector('.commit');
  if (!btn) return;
  const done = review.accepted_as != null;
  btn.disabled = done || review.committing || !changed();
  btn.textContent = done ? `Committed as v${review.accepted_as}`
    : `Commit ${review.edits.filter((e) => e.accept).length} accepted edit(s) as a new version`;
  root.querySelectorAll('.edit-row').forEach((row) => {
    const e = review.edits[parseInt(row.dataset.n, 10) - 1];
    row.classList.toggle('rejected', !e.accept);
    row.querySelector('.accept').checked = e.accept;
  });
}

function diffView(e) {
  const d = el('div', 'diff');
  for (const [op, text] of e.diff) {
    const span = el(op === '+' ? 'ins' : op === '-' ? 'del' : 'span', '', text);
    d.appendChild(span);
    d.appendChild(document.createTextNode(' '));
  }
  return d;
}

function row(e) {
  const r = el('div', 'edit-row');
  r.dataset.n = e.n;
  r.id = `edit_${e.n}`;
  const box = el('label', 'pick');
  const cb = el('input', 'accept');
  cb.type = 'checkbox';
  cb.checked = e.accept;
  cb.disabled = review.accepted_as != null;
  cb.addEventListener('change', () => { e.accept = cb.checked; save(); });
  box.appendChild(cb);
  r.appendChild(box);
  const thumb = el('div', 'thumb');
  if (e.thumb) {
    const img = el('img');
    img.src = e.thumb;
    img.alt = e.target;
    thumb.appendChild(img);
  }
  r.appendChild(thumb);
  const body = el('div', 'body');
  const head = el('div', 'head');
  head.appendChild(el('b', 'target', `${e.n}. ${e.target}`));
  if (e.editable && review.accepted_as == null) {
    const editBtn = el('button', 'edit-btn', 'Edit');
    editBtn.type = 'button';
    editBtn.addEventListener('click', () => {
      const area = el('textarea', 'new-text');
      area.value = e.text ?? e.new;
      area.rows = 2;
      area.addEventListener('input', () => { e.text = area.value; e.accept = true; save(); });
      body.querySelector('.diff').replaceWith(area);
      editBtn.remove();
      area.focus();
    });
    head.appendChild(editBtn);
  }
  body.appendChild(head);
  if (e.text != null && e.text !== e.new) {
    const area = el('textarea', 'new-text');
    area.value = e.text;
    area.rows = 2;
    area.addEventListener('input', () => { e.text = area.value; save(); });
    body.appendChild(area);
  } else {
    body.appendChild(diffView(e));
  }
  const why = el('div', 'why');
  why.appendChild(el('i', '', e.rationale));
  if (e.sources.length) why.appendChild(el('span', 'sources', ` · from ${e.sources.join('; ')}`));
  body.appendChild(why);
  if (e.flag) body.appendChild(el('div', 'flag', `⚠ ${e.flag}`));
  r.appendChild(body);
  return r;
}

function draw() {
  const root = element.querySelector('.review');
  root.replaceChildren();
  if (!review) {
    root.appendChild(el('p', 'empty', 'No proposal yet: add notes or run the critics, then ask the refiner.'));
    return;
  }
  const bar = el('div', 'bar');
  bar.appendChild(el('span', 'summary', review.summary));
  const all = el('button', 'all', 'Accept all');
  all.type = 'button';
  all.id = 'accept_all_btn';
  const none = el('button', 'none', 'Reject all');
  none.type = 'button';
  none.id = 'reject_all_btn';
  for (const [b, v] of [[all, true], [none, false]]) {
    b.disabled = review.accepted_as != null;
    b.addEventListener('click', () => { review.edits.forEach((e) => { e.accept = v; }); save(); });
    bar.appendChild(b);
  }
  root.appendChild(bar);
  if ((review.answers || []).length) {
    root.appendChild(el('div', 'answers-head', 'Your notes, request by request:'));
    const list = el('ul', 'answers');
    list.id = 'answers';
    for (const a of review.answers) {
      const li = el('li', a.status.replace(' ', '-'));
      li.appendChild(el('span', 'request', `“${a.request}”`));
      const said = a.status === 'changed' ? a.answer : (a.answer && a.answer !== a.status ? `${a.status}: ${a.answer}` : a.status);
      const edits = a.edits.length ? ` (edit ${a.edits.join(', ')})` : '';
      li.appendChild(document.createTextNode(` → ${said}${edits}`));
      list.appendChild(li);
    }
    root.appendChild(list);
  }
  review.edits.forEach((e) => root.appendChild(row(e)));
  for (const u of review.not_changed) root.appendChild(el('div', 'unchanged', `Not changed: ${u.what} (${u.why})`));
  const commit = el('button', 'commit');
  commit.type = 'button';
  commit.id = 'commit_btn';
  commit.addEventListener('click', () => {
    if (commit.disabled) return;
    review.committing = true;  // one click, one version: disabled until the server answers
    save();
    trigger('commit');
  });
  root.appendChild(commit);
  state();
}

function load() {
  const v = props.value;
  if (v === lastJson) return;
  lastJson = v;
  try { review = v ? JSON.parse(v) : null; } catch (err) { review = null; }
  draw();
}

watch('value', load);
load();
