// The optional resizer of a host page that embeds elements through embed.html frames: one classic
// script (`<script src="…/dist/embed-resize.js"></script>`) that sets each such <iframe>'s height to
// the height its page posts (`{type: 'mha-embed', height}`), so that a frame never cuts its element
// off nor leaves a gap. Frames of other origins' pages are matched by the window that posted.
addEventListener('message', (e) => {
  const d = e.data;
  if (!d || d.type !== 'mha-embed' || !Number.isFinite(d.height) || d.height <= 0) return;
  for (const f of document.querySelectorAll('iframe')) {
    if (f.contentWindow === e.source) f.style.height = `${Math.min(Math.ceil(d.height), 100000)}px`;
  }
});
