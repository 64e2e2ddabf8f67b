// The campaign page: runs the whole-campaign audit when the page opens and says what it found.
'use strict';
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
