// The campaign page: runs the whole-campaign audit when the page opens and says what it found.
'use strict';
// The deadline, counted down from the server's clock (not the reader's).
(() => {
  const line = document.getElementById('clock-line');
  if (!line || line.dataset.status !== 'waiting' || !line.dataset.due) return;
  const summary = line.textContent;
  const offset = Date.parse(line.dataset.now) - Date.now();
  const due = Date.parse(line.dataset.due);
  const draw = () => {
    const left = Math.max(0, Math.floor((due - (Date.now() + offset)) / 1000));
    const h = Math.floor(left / 3600);
    const m = Math.floor((left % 3600) / 60);
    const s = left % 60;
    line.textContent = `${summary} (${h} h ${String(m).padStart(2, '0')} min ${String(s).padStart(2, '0')} s left)`;
  };
  draw();
  setInterval(draw, 1000);
})();
(async () => {
  const id = document.body.dataset.campaign;
  const status = document.getElementById('audit-status');
  try {
    const response = await fetch(`/v1/campaigns/${id}/audit`);
    const audit = await response.json();
    if (audit.ok) {
      status.textContent = `Audit: all ${audit.posts} posts check out — ${audit.result_numbers} result numbers, ${audit.reinforcement_rolls} reinforcement rolls and ${audit.dice} dice recomputed, hash chain intact.`;
      status.className = 'ok';
    } else {
      status.textContent = `Audit: ${audit.differences.length} differences found — see the audit.`;
      status.className = 'bad';
      for (const d of audit.differences) {
        const post = document.getElementById(`post-${d.seq}`);
        if (post) post.classList.add('differs');
      }
    }
  } catch (e) {
    status.textContent = 'The audit could not be run: ' + e;
    status.className = 'bad';
  }
})();
