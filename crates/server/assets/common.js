// Shared by the player's page and the moderator's console: the token, API calls, orders
// with an Idempotency-Key, and receipts. Text from the server is always set as text.
'use strict';

const Adj = (() => {
  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === false || value === null || value === undefined) continue;
      node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** Who a token is, in words: "Grant, player (the Union)". */
  function whoIs(data) {
    const side = data.side ? ` (${sideName(data.side)})` : '';
    return `${data.name}, ${data.kind}${side}`;
  }

  /**
   * Takes `#token=…` from the address (and removes it), or the one kept for `key`. A link with
   * another token than the one kept asks first: a link someone sent must not switch the player
   * to another account unawares.
   */
  async function takeToken(key) {
    const match = location.hash.match(/(?:^#|&)token=([^&]+)/);
    const kept = localStorage.getItem(key);
    if (match) {
      history.replaceState(null, '', location.pathname + location.search);
      const offered = decodeURIComponent(match[1]);
      if (kept && kept !== offered) {
        const [now, then] = await Promise.all([api('GET', '/v1/whoami', kept), api('GET', '/v1/whoami', offered)]);
        if (now.ok) {
          const as = then.ok ? whoIs(then.data) : 'a token this server refuses';
          if (!confirm(`You are signed in as ${whoIs(now.data)}. Open this page as ${as} instead?`)) return kept;
        }
      }
      localStorage.setItem(key, offered);
    }
    return localStorage.getItem(key);
  }

  /** The sign-in header: who the token is, a form when there is none, and "forget". */
  async function signIn(key, onToken) {
    const token = await takeToken(key);
    const form = document.getElementById('signin');
    const forget = document.getElementById('forget');
    const shown = document.getElementById('signed-in');
    forget.addEventListener('click', () => {
      localStorage.removeItem(key);
      location.reload();
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      localStorage.setItem(key, document.getElementById('signin-token').value.trim());
      location.reload();
    });
    if (!token) {
      form.hidden = false;
      forget.hidden = true;
      shown.textContent = 'Not signed in: open the link your moderator gave you, or paste your token.';
      onToken(null, null);
      return;
    }
    const me = await api('GET', '/v1/whoami', token);
    if (!me.ok) {
      shown.textContent = `This token is refused: ${me.detail}`;
      form.hidden = false;
      onToken(null, null);
      return;
    }
    shown.textContent = `Signed in as ${whoIs(me.data)}.`;
    onToken(token, me.data);
  }

  function sideName(side) {
    return { union: 'the Union', confederate: 'the Rebels' }[side] || side || 'moderator';
  }

  /** Calls the API; answers {ok, status, data, detail}. */
  async function api(method, path, token, body, headers) {
    const init = { method, headers: Object.assign({ Accept: 'application/json' }, headers || {}) };
    if (token) init.headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
    const detail = response.ok ? '' : (data && data.detail) || `${response.status} ${response.statusText}`;
    return { ok: response.ok, status: response.status, data, detail };
  }

  function newKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /**
   * Sends one order from `form`. The form keeps its Idempotency-Key until the server has
   * answered for sure, so pressing again after a lost answer never posts twice. A refusal is
   * shown beside the order in the server's words; the form keeps what was typed.
   */
  async function submit(form, call, describe) {
    const refusal = form.querySelector('.refusal');
    const button = form.querySelector('button[type=submit]');
    if (button.disabled) return null;
    if (!form.dataset.key) form.dataset.key = newKey();
    button.disabled = true;
    refusal.textContent = '';
    form.classList.remove('refused');
    try {
      const answer = await call(form.dataset.key);
      if (answer.ok || (answer.status >= 400 && answer.status < 500 && answer.status !== 429 && answer.status !== 408)) {
        delete form.dataset.key;
      }
      if (!answer.ok) {
        const field = answer.data && answer.data.field ? answer.data.field : '';
        const said = describe ? describe(field) : (field ? `(${field})` : '');
        refusal.textContent = said && !said.startsWith('(') ? `Refused: ${said}: ${answer.detail}` : `Refused: ${answer.detail}${said ? ` ${said}` : ''}`;
        form.classList.add('refused');
      }
      return answer;
    } catch (e) {
      refusal.textContent = `Not sent: ${e.message}. Press again: it will not be posted twice.`;
      return null;
    } finally {
      button.disabled = false;
    }
  }

  /** Posts `{kind, body}` to the campaign with the form's key. */
  function post(form, campaign, token, kind, body, describe) {
    return submit(form, (key) =>
      api('POST', `/v1/campaigns/${campaign}/posts`, token, { kind, body }, { 'Idempotency-Key': key }), describe);
  }

  /** The page of a post's audit (its JSON is `post.audit`). */
  function auditPage(post) {
    return `/campaigns/${post.campaign_id}/posts/${post.seq}/audit`;
  }

  /** Whether the post's stamp decided something by its result number: a battle fought on it. */
  function decidesByResultNumber(post) {
    return post.outcomes.some((o) => o.kind === 'battle' && o.data && o.data.numbers);
  }

  /** A post as a list item: number, side, kind, stamp, the result number where it decided a battle, outcomes, audit. */
  function postItem(post) {
    const n = post.numbers;
    const time = decidesByResultNumber(post)
      ? [` · ${n.time_of_day} → ${sealedLabel(post)}`, el('b', { class: 'result' }, String(n.result_number.result).padStart(2, '0')),
        ` (√${n.result_number.n} = ${n.result_number.sqrt}) · `]
      : [` · ${n.time_of_day} · `];
    const item = el('li', { id: `post-${post.seq}`, class: `post side-${post.side || 'moderator'}${post.void ? ' void' : ''}` },
      el('div', { class: 'head' }, el('span', { class: 'seq' }, `#${post.seq}`), ' ',
        el('span', { class: 'side' }, post.side || 'moderator'), ' ', el('span', { class: 'kind' }, post.kind),
        post.void ? el('span', { class: 'badge' }, ' void') : null),
      el('div', { class: 'time' }, el('time', { datetime: post.stamp }, post.stamp), ...time,
        el('a', { href: auditPage(post) }, 'audit')));
    if (post.outcomes.length) {
      item.append(el('ul', { class: 'outcomes' }, post.outcomes.map((o) => el('li', { class: `outcome kind-${o.kind}` }, o.headline, sealedDetail(o)))));
    }
    return item;
  }

  /** The receipt of a post just made: stamp, the result number with its bc line where it decided a battle, outcomes in words, dice and tables. */
  function receipt(post) {
    const n = post.numbers;
    const box = el('div', { class: 'receipt', id: 'receipt-body' },
      el('p', {}, `Posted #${post.seq} (${post.kind}) — server stamp `, el('time', { datetime: post.stamp, class: 'stamp' }, post.stamp),
        `, ${n.time_of_day} on the campaign clock.`),
      decidesByResultNumber(post)
        ? el('p', {}, sealedLabel(post, 'Result number '), el('b', { class: 'result' }, String(n.result_number.result).padStart(2, '0')),
          ` from √${n.result_number.n} = ${n.result_number.sqrt}. Check it: `, el('code', { class: 'bc' }, n.result_number.bc))
        : null,
      el('ul', { class: 'outcomes' }, post.outcomes.map((o) => el('li', { class: `outcome kind-${o.kind}` }, o.headline, sealedDetail(o), resolutionDetail(o)))),
      el('p', {}, el('a', { href: auditPage(post), class: 'audit-link' }, `Audit of post #${post.seq}`)));
    return box;
  }

  /** In a sealed-delay battle the stamp's own number is not the battle's: the battle shows its own. */
  function sealedLabel(post, plain = 'result number ') {
    const sealed = post.outcomes.some((o) => o.data && o.data.sealed_delay);
    return sealed ? "the stamp's own number (the battle's, after the sealed delay, is below) " : plain;
  }

  /** A sealed-delay battle: the stamp, the delay, the result time and its result number, and the revealed secret. */
  function sealedDetail(outcome) {
    const d = outcome.data || {};
    const sd = d.sealed_delay;
    if (!sd || !d.numbers) return null;
    const r = d.numbers.result_number || {};
    return el('p', { class: 'sealed-delay' },
      'Stamp ', el('time', { datetime: sd.stamp }, sd.stamp), ` + sealed delay ${sd.delay_ms} ms = result time `,
      el('time', { datetime: sd.result_time, class: 'result-time' }, sd.result_time), ' → result number ',
      el('b', { class: 'result' }, String(d.numbers.result).padStart(2, '0')), ` (√${r.n} = ${r.sqrt}). `,
      `Draw ${sd.draw} reveals s_${sd.draw} = `, el('code', {}, sd.secret), '; SHA-256 of it is ', el('code', {}, sd.previous), '.');
  }

  /** Every die and every table cell of a resolver outcome. */
  function resolutionDetail(outcome) {
    const d = outcome.data || {};
    if (!Array.isArray(d.dice) && !Array.isArray(d.lookups)) return null;
    const parts = el('div', { class: 'resolution' });
    if (Array.isArray(d.dice) && d.dice.length) {
      parts.append(el('table', { class: 'dice' }, el('caption', {}, 'Dice'),
        el('tr', {}, el('th', { scope: 'col' }, '#'), el('th', { scope: 'col' }, 'for'), el('th', { scope: 'col' }, 'die'), el('th', { scope: 'col' }, 'rolled')),
        d.dice.map((die) => el('tr', { class: 'die' }, el('td', {}, die.index), el('td', {}, die.purpose), el('td', {}, `d${die.faces}`), el('td', { class: 'value' }, die.value)))));
    }
    if (Array.isArray(d.lookups) && d.lookups.length) {
      parts.append(el('table', { class: 'lookups' }, el('caption', {}, 'Tables read'),
        el('tr', {}, el('th', { scope: 'col' }, 'table'), el('th', { scope: 'col' }, 'row'), el('th', { scope: 'col' }, 'column'), el('th', { scope: 'col' }, 'cell')),
        d.lookups.map((l) => el('tr', { class: 'lookup' }, el('td', {}, l.table), el('td', {}, l.row), el('td', {}, l.column), el('td', { class: 'value' }, l.value)))));
    }
    if (d.stream_text) parts.append(el('p', { class: 'stream' }, 'Dice stream: ', el('code', {}, d.stream_text)));
    return parts;
  }

  /**
   * The campaign clock in one line: the server's summary, and the time left before the deadline
   * that matters to `side` (or the next one), counted from the server's clock, not the reader's.
   */
  function clockLine(clock, side, fetchedAt) {
    if (!clock) return '';
    const running = (clock.waits || []).filter((w) => w.due);
    const wait = running.find((w) => w.side === side) || running.sort((a, b) => Date.parse(a.due) - Date.parse(b.due))[0];
    if (!wait || clock.status !== 'waiting') return clock.summary;
    const serverNow = Date.parse(clock.now) + (Date.now() - fetchedAt);
    const left = Date.parse(wait.due) - serverNow;
    const who = wait.side === side ? 'You have' : `${sideName(wait.side)} have`;
    return `${clock.summary}. ${who} ${duration(left)} left (${wait.stage}, until ${wait.due_local}).`;
  }

  /** Milliseconds as people read a countdown: "1 d 3 h", "2 h 05 min", "4 min 09 s". */
  function duration(ms) {
    if (ms <= 0) return 'no time';
    const s = Math.floor(ms / 1000);
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const pad = (n) => String(n).padStart(2, '0');
    if (d) return `${d} d ${h} h`;
    if (h) return `${h} h ${pad(m)} min`;
    return `${m} min ${pad(s % 60)} s`;
  }

  return { el, signIn, api, post, submit, postItem, receipt, sideName, newKey, clockLine };
})();
