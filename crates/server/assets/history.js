// The turn-by-turn history of a managed campaign, on the public page and the player's page: step
// back and forward through the player turns, the map redrawn as it was at the start of each and
// the posts of that turn beside it. Everything comes from the public API: /turns lists the
// player turns, map.svg?turn=N&side=S draws one, /posts?after= reads its posts.
'use strict';

(() => {
  const root = document.getElementById('turns');
  if (!root || typeof Adj === 'undefined') return;
  const { el } = Adj;
  const campaign = document.body.dataset.campaign;
  /** The most posts of one player turn shown beside its map; the log has the rest. */
  const SHOWN = 100;
  let steps = [];
  let at = -1;

  const label = el('p', { id: 'turn-label', 'aria-live': 'polite' });
  const earlier = el('button', { type: 'button', id: 'turn-earlier' }, '◀ Earlier turn');
  const later = el('button', { type: 'button', id: 'turn-later' }, 'Later turn ▶');
  const picture = el('img', { id: 'turn-map', alt: '', width: '100%' });
  const link = el('a', { id: 'turn-map-link' }, picture);
  const posts = el('ol', { id: 'turn-posts', class: 'posts' });
  const more = el('p', { id: 'turn-more', class: 'hint', hidden: true });
  root.append(
    el('div', { class: 'turn-nav' }, earlier, label, later),
    el('div', { class: 'turn-view' }, el('figure', {}, link), el('div', { class: 'turn-log' }, posts, more)));
  earlier.addEventListener('click', () => show(at - 1));
  later.addEventListener('click', () => show(at + 1));
  root.addEventListener('keydown', (event) => {
    if (event.target.closest('input, textarea, select')) return;
    if (event.key === 'ArrowLeft') show(at - 1);
    else if (event.key === 'ArrowRight') show(at + 1);
    else return;
    event.preventDefault();
  });
  // A turn picked in the page's own list of turns (where there is one) is shown here.
  for (const a of document.querySelectorAll('#history a[data-turn]')) {
    a.addEventListener('click', (event) => {
      const i = steps.findIndex((s) => String(s.turn) === a.dataset.turn && s.side === a.dataset.side);
      if (i < 0) return;
      event.preventDefault();
      show(i);
      root.scrollIntoView({ block: 'nearest' });
    });
  }

  const sideName = (side) => (side === 'union' ? 'Union' : 'Rebels');

  /** Shows step `i`: its map, what it was, and its posts. */
  async function show(i) {
    if (i < 0 || i >= steps.length) return;
    at = i;
    const step = steps[i];
    earlier.disabled = i === 0;
    later.disabled = i === steps.length - 1;
    const range = step.ended_at ? `posts ${step.began_after + 1}–${step.ended_at}` : `posts from ${step.began_after + 1}, going on`;
    const name = step.turn ? `Turn ${step.turn}, ${sideName(step.side)}` : 'Deployment';
    label.textContent = `${name} (${i + 1} of ${steps.length}; ${range})`;
    root.dataset.turn = step.turn || '';
    root.dataset.side = step.side || '';
    const map = step.turn
      ? `/v1/campaigns/${campaign}/map.svg?turn=${step.turn}&side=${step.side}`
      : `/v1/campaigns/${campaign}/map.svg?at=${step.ended_at || 0}`;
    picture.src = map;
    link.href = map;
    picture.alt = step.turn
      ? `The campaign map at the start of turn ${step.turn}, ${sideName(step.side)}`
      : 'The campaign map once both sides had deployed';
    const count = step.ended_at ? step.ended_at - step.began_after : SHOWN;
    const answer = await Adj.api('GET', `/v1/campaigns/${campaign}/posts?after=${step.began_after}&limit=${Math.min(SHOWN, Math.max(1, count))}`);
    if (at !== i) return;
    if (!answer.ok) {
      posts.replaceChildren(el('li', {}, answer.detail));
      return;
    }
    const mine = answer.data.posts.filter((p) => !step.ended_at || p.seq <= step.ended_at);
    // Newest last, as the turn was played; an id of their own so the page's log keeps its ids.
    posts.replaceChildren(...mine.map((p) => {
      const item = Adj.postItem(p);
      item.id = `turn-post-${p.seq}`;
      return item;
    }));
    if (!mine.length) posts.replaceChildren(el('li', {}, 'No posts yet in this turn.'));
    more.hidden = !(step.ended_at && count > SHOWN);
    more.textContent = `The first ${SHOWN} of ${count} posts; the log below has them all.`;
  }

  /** The steps: deployment, then each player turn; the newest shown first. */
  async function load() {
    const answer = await Adj.api('GET', `/v1/campaigns/${campaign}/turns`);
    if (!answer.ok) return;
    const turns = answer.data.turns;
    const first = turns.length ? turns[0].began_after : null;
    // A reader on the newest step stays on the newest as turns begin; one who stepped back stays.
    const following = at < 0 || at === steps.length - 1;
    steps = [{ turn: null, side: null, began_after: 0, ended_at: first }].concat(turns);
    root.hidden = false;
    // The plain list of turns is for readers without scripts: the steps above take its place.
    const list = document.getElementById('history');
    if (list) list.hidden = true;
    await show(following ? steps.length - 1 : Math.min(at, steps.length - 1));
  }

  load();
  // A new player turn on the page's live log: the history grows with it.
  document.addEventListener('adjutant:post', () => {
    clearTimeout(load.timer);
    load.timer = setTimeout(load, 300);
  });
})();
