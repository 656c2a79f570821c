// What the storyboard cards and the references panel share, loaded once into the page (their gr.HTML's `head`, which
// Gradio injects once and runs before their `js_on_load`): `window.chiefKit` with `el`, an element with text set as
// text; `clear`, which empties a component's root and says when no project is open; `pictureInput`, a hidden file
// input for one picture (given the component's `upload`, which Gradio passes to `js_on_load` only).
window.chiefKit = window.chiefKit || (() => {
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  function clear(root, value) {
    root.replaceChildren();
    if (!value) root.appendChild(el('p', 'empty', 'Open or create a project first (Projects tab).'));
    return !!value;
  }

  // A file that is not a PNG, JPEG or WebP, or is over `maxBytes`, is refused in one line through `say`, before
  // anything is sent; else it goes up through Gradio's upload route (`upload`) and `send` gets its server path.
  const PICTURE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

  function pictureInput(upload, cls, maxBytes, say, send) {
    const file = el('input', cls);
    file.type = 'file';
    file.accept = PICTURE_TYPES.join(',');
    file.hidden = true;
    file.addEventListener('change', async () => {
      const f = file.files[0];
      file.value = '';
      if (!f) return;
      if (!PICTURE_TYPES.includes(f.type)) { say(`${f.name}: use a PNG, JPEG or WebP picture.`); return; }
      if (f.size > maxBytes) { say(`${f.name}: larger than ${Math.round(maxBytes / 2 ** 20)} MB.`); return; }
      say(`Uploading ${f.name}…`);
      let path;
      try {
        ({ path } = await upload(f));
      } catch (e) {
        say(`${f.name}: the upload failed.`);
        return;
      }
      send(path);
    });
    return file;
  }

  return { el, clear, pictureInput };
})();
