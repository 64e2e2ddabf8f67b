// The moderator's console: create campaigns, issue tokens (shown once, with the player's link),
// register webhooks and read their deliveries, roll back, umpire, and open the audits.
'use strict';

(() => {
  const { el, api } = Adj;
  const $ = (id) => document.getElementById(id);
  let token = null;
  let me = null;
  const campaigns = [];

  Adj.signIn('adjutant.token.console', (t, who) => {
    token = t;
    me = who;
    if (!token) return;
    wire();
    loadCampaigns();
    loadScenarios();
  });

  /** The moderator's uploaded scenarios, every page of them, as choices of the create form beside the shipped ones. */
  async function loadScenarios() {
    const options = [];
    let after = '';
    do {
      const answer = await api('GET', `/v1/scenarios?limit=100${after}`, token);
      if (!answer.ok) return;
      options.push(...answer.data.uploaded.map((s) => el('option', { value: `scenario:${s.id}` }, `Managed: ${s.name} — ${s.title} (yours)`)));
      after = answer.data.next_after ? `&after=${encodeURIComponent(answer.data.next_after)}` : '';
    } while (after);
    $('create-uploaded').replaceChildren(...options);
    $('create-uploaded').hidden = !options.length;
  }

  const current = () => $('campaign-pick').value;

  /** A moderator's own campaigns, every page of them; the operator sees every campaign. */
  async function loadCampaigns() {
    const mine = me && me.kind === 'moderator' && me.id ? `&moderator=${encodeURIComponent(me.id)}` : '';
    const found = [];
    let after = '';
    do {
      const answer = await api('GET', `/v1/campaigns?limit=100${mine}${after}`, token);
      if (!answer.ok) return;
      found.push(...answer.data.campaigns);
      after = answer.data.next_after ? `&after=${encodeURIComponent(answer.data.next_after)}` : '';
    } while (after);
    const was = current();
    campaigns.splice(0, campaigns.length, ...found);
    $('campaign-pick').replaceChildren(...campaigns.map((c) => el('option', { value: c.id }, `${c.name} (${c.mode})`)));
    if (was) $('campaign-pick').value = was;
    showCampaign();
    showOverview();
  }

  /**
   * Every campaign's state in one table: running, waiting for whom since when, overdue, paused
   * or finished, with the next deadline; overdue first by default.
   */
  const overview = [];
  async function showOverview() {
    const rows = await Promise.all(campaigns.map(async (c) => {
      const answer = await api('GET', `/v1/campaigns/${c.id}`, token);
      return { campaign: c, clock: answer.ok ? answer.data.clock || null : null };
    }));
    overview.splice(0, overview.length, ...rows);
    drawOverview();
  }
  const rank = { overdue: 0, paused: 1, waiting: 2, stopped: 3, finished: 4 };
  function drawOverview() {
    const byName = $('overview-order').value === 'name';
    const next = (r) => {
      const due = ((r.clock && r.clock.waits) || []).filter((w) => w.due).map((w) => Date.parse(w.due));
      return due.length ? Math.min(...due) : Infinity;
    };
    const rows = [...overview].sort((a, b) => (byName
      ? a.campaign.name.localeCompare(b.campaign.name)
      : (rank[a.clock ? a.clock.status : 'stopped'] ?? 5) - (rank[b.clock ? b.clock.status : 'stopped'] ?? 5)
        || next(a) - next(b) || a.campaign.name.localeCompare(b.campaign.name)));
    $('overview').querySelector('tbody').replaceChildren(...rows.map((r) => {
      const status = r.clock ? r.clock.status : 'no deadlines';
      const waits = ((r.clock && r.clock.waits) || []).filter((w) => w.due);
      const soonest = waits.sort((a, b) => Date.parse(a.due) - Date.parse(b.due))[0];
      return el('tr', { 'data-status': status, 'data-campaign': r.campaign.id },
        el('td', {}, r.campaign.name),
        el('td', {}, r.clock ? r.clock.summary : 'Running, with no deadlines.'),
        el('td', {}, soonest ? soonest.due_local : '—'));
    }));
  }

  function showCampaign() {
    const id = current();
    if (!id) {
      $('campaign-links').textContent = 'No campaign yet: create one above.';
      return;
    }
    $('campaign-links').replaceChildren(
      el('a', { href: `/campaigns/${id}` }, 'public page'), ' · ',
      el('a', { href: `/campaigns/${id}/audit`, id: 'audit-link' }, 'whole-campaign audit'), ' · ',
      el('a', { href: `/campaigns/${id}/fairness`, id: 'fairness-link' }, 'fairness report'), ' · ',
      el('a', { href: `/v1/campaigns/${id}/posts` }, 'posts (JSON)'));
    showPlayers();
    showWebhooks();
    showClock();
  }

  /** Who holds the game up: the campaign clock's state and the next deadline, counted down. */
  let clock = null;
  let clockFetched = 0;
  async function showClock() {
    const id = current();
    const answer = await api('GET', `/v1/campaigns/${id}`, token);
    clock = answer.ok ? answer.data.clock || null : null;
    clockFetched = Date.now();
    drawClock();
  }
  function drawClock() {
    const line = $('campaign-clock');
    line.hidden = !clock;
    line.dataset.status = clock ? clock.status : '';
    if (clock) line.textContent = Adj.clockLine(clock, null, clockFetched);
  }
  setInterval(() => { if (clock) drawClock(); }, 1000);

  /** The campaign's players: id, side, since when, and a rotate and a revoke button each. */
  async function showPlayers() {
    const id = current();
    const answer = await api('GET', `/v1/campaigns/${id}/players`, token);
    if (!answer.ok) {
      $('players').replaceChildren();
      return;
    }
    const rows = answer.data.players.map((p) => {
      const rotate = el('button', { type: 'button', class: 'rotate', disabled: !!p.revoked_at }, 'New token');
      const revoke = el('button', { type: 'button', class: 'revoke', disabled: !!p.revoked_at }, 'Revoke');
      const replace = el('button', { type: 'button', class: 'replace', disabled: !!p.revoked_at }, 'Replace');
      const said = el('span', { class: 'said', role: 'status' });
      rotate.addEventListener('click', async () => {
        if (!confirm(`Give ${p.name} a new token? Their old link stops working at once.`)) return;
        const r = await api('POST', `/v1/campaigns/${id}/players/${p.id}/rotate`, token);
        if (r.ok) issued(`${p.name} (${Adj.sideName(p.side)}), new`, r.data.token, `/play/${id}`, p.side);
        else said.textContent = r.detail;
      });
      replace.addEventListener('click', async () => {
        const name = prompt(`Who plays ${Adj.sideName(p.side)} instead of ${p.name}? Their name:`);
        if (!name || !name.trim()) return;
        const r = await api('POST', `/v1/campaigns/${id}/players/${p.id}/replace`, token, { name: name.trim() });
        if (r.ok) {
          issued(`${r.data.name} (${Adj.sideName(p.side)}), replacing ${p.name}`, r.data.token, `/play/${id}`, p.side);
          showPlayers();
        } else said.textContent = r.detail;
      });
      revoke.addEventListener('click', async () => {
        if (!confirm(`Revoke ${p.name}'s token? Their posts stay in the log; the token is refused from now on.`)) return;
        const r = await api('DELETE', `/v1/campaigns/${id}/players/${p.id}`, token);
        if (r.ok) showPlayers();
        else said.textContent = r.detail;
      });
      // How the player is told it is their turn: the forum handle and Discord id the bot
      // mentions, and an email address.
      const c = p.contact || {};
      const field = (name, label, value) => el('input', { class: `contact-${name}`, 'aria-label': `${label} of ${p.name}`, placeholder: label, value: value || '' });
      const handle = field('handle', 'forum handle', c.forum_handle);
      const discord = field('discord', 'Discord user id', c.discord_user_id);
      const email = field('email', 'email', c.email);
      const save = el('button', { type: 'submit' }, 'Save contact');
      const contact = el('form', { class: 'contact' }, handle, ' ', discord, ' ', email, ' ', save);
      contact.addEventListener('submit', async (e) => {
        e.preventDefault();
        const body = {};
        if (handle.value.trim()) body.forum_handle = handle.value.trim().replace(/^@/, '');
        if (discord.value.trim()) body.discord_user_id = discord.value.trim();
        if (email.value.trim()) body.email = email.value.trim();
        const r = await api('PUT', `/v1/campaigns/${id}/players/${p.id}/contact`, token, body);
        said.textContent = r.ok ? 'Contact saved.' : r.detail;
      });
      return el('tr', { class: `player${p.revoked_at ? ' revoked' : ''}`, 'data-player': p.id },
        el('td', {}, p.name), el('td', {}, Adj.sideName(p.side)), el('td', {}, el('code', { class: 'player-id' }, p.id)),
        el('td', {}, p.revoked_at ? `revoked ${p.revoked_at}` : `since ${p.issued_at}`),
        el('td', {}, contact), el('td', {}, rotate, ' ', replace, ' ', revoke, ' ', said));
    });
    $('players').replaceChildren(el('h3', {}, 'Players'), rows.length
      ? el('table', { id: 'player-list', class: 'figures' },
        el('tr', {}, ...['Name', 'Side', 'Id', 'Token', 'Contact', ''].map((h) => el('th', { scope: 'col' }, h))), ...rows)
      : el('p', {}, 'No player yet: issue a token above.'));
  }

  function wire() {
    $('campaign-pick').addEventListener('change', showCampaign);
    $('overview-order').addEventListener('change', drawOverview);
    on('form-create', async (form) => {
      const [what, name] = $('create-game').value.split(':');
      const body = { name: $('create-name').value, mode: what === 'scenario' ? 'managed' : 'resolver',
        settings: { time_zone: $('create-zone').value.trim(), clock: $('create-clock').value,
          first_digit: Number($('create-digit').value), victory_rounding: $('create-rounding').value,
          result_time: $('create-result-time').value, rules_version: Number($('create-rules-version').value) } };
      body[what] = name;
      if (what === 'scenario' && $('create-deadline').value) {
        body.settings.turn_deadline = $('create-deadline').value;
        body.settings.missed_turn = $('create-missed').value;
      }
      const answer = await Adj.submit(form, () => api('POST', '/v1/campaigns', token, body));
      if (answer && answer.ok) {
        await loadCampaigns();
        $('campaign-pick').value = answer.data.id;
        showCampaign();
        // Said beside the form that made it, not at the foot of the page.
        $('created-box').replaceChildren(el('p', { id: 'created' }, `Created ${answer.data.name}: `, el('code', { class: 'campaign-id' }, answer.data.id)));
      }
    });
    on('form-player', async (form) => {
      const id = current();
      const side = $('player-side').value;
      const answer = await Adj.submit(form, () => api('POST', `/v1/campaigns/${id}/players`, token, { name: $('player-name').value, side }));
      if (answer && answer.ok) {
        issued(`${$('player-name').value} (${Adj.sideName(side)})`, answer.data.token, `/play/${id}`, side);
        showPlayers();
      }
    });
    on('form-bot', async (form) => {
      const id = current();
      const answer = await Adj.submit(form, () => api('POST', `/v1/campaigns/${id}/bots`, token, { name: $('bot-name').value }));
      if (answer && answer.ok) issued(`bot ${$('bot-name').value}`, answer.data.token, null, 'bot');
    });
    on('form-webhook', async (form) => {
      const id = current();
      const answer = await Adj.submit(form, () => api('POST', `/v1/campaigns/${id}/webhooks`, token, { url: $('webhook-url').value }));
      if (answer && answer.ok) {
        $('receipt').replaceChildren(el('p', {}, `Webhook registered. Its signing secret (shown once): `, el('code', {}, answer.data.secret)));
        showWebhooks();
      }
    });
    on('form-rollback', async (form) => {
      const body = { to_seq: Number($('rollback-to').value), reason: $('rollback-reason').value };
      // Say which posts it voids before it is posted: a rollback is never undone, only rolled
      // back by a later one, which voids the posts after its own target as any rollback does.
      const voided = await postsAfter(current(), body.to_seq);
      if (voided === null) return;
      const list = voided.length ? voided.map((p) => `#${p.seq} ${p.side || 'moderator'} ${p.kind}`).join(', ') : 'no post';
      const sure = confirm(`Roll back to post #${body.to_seq}? This voids ${voided.length} ${voided.length === 1 ? 'post' : 'posts'}: ${list}. `
        + 'They stay in the log, marked void, and the game goes on from the state after post '
        + `#${body.to_seq}. A rollback cannot be deleted; a later rollback to a post before this one voids it in turn.`);
      if (!sure) return;
      const answer = await Adj.post(form, current(), token, 'rollback', body);
      if (answer && answer.ok) $('receipt').replaceChildren(Adj.receipt(answer.data));
    });
    on('form-umpire', async (form) => {
      let inner;
      try {
        inner = JSON.parse($('umpire-body').value || '{}');
      } catch (e) {
        form.querySelector('.refusal').textContent = 'Not sent: the body is not JSON.';
        return;
      }
      const body = { side: $('umpire-side').value, kind: $('umpire-kind').value.trim(), body: inner, reason: $('umpire-reason').value };
      const answer = await Adj.post(form, current(), token, 'umpire', body);
      if (answer && answer.ok) $('receipt').replaceChildren(Adj.receipt(answer.data));
    });
  }

  /** The posts after `seq` that are not void yet (what a rollback to `seq` would void), or null when they cannot be read. */
  async function postsAfter(id, seq) {
    const found = [];
    let after = seq;
    for (;;) {
      const answer = await api('GET', `/v1/campaigns/${id}/posts?after=${after}&limit=100`, token);
      if (!answer.ok) return null;
      found.push(...answer.data.posts.filter((p) => !p.void));
      if (!answer.data.next_after) return found;
      after = answer.data.next_after;
    }
  }

  function on(id, handler) {
    $(id).addEventListener('submit', (event) => {
      event.preventDefault();
      handler(event.target);
    });
  }

  /** A token, shown once, with the player's link and a copy button. */
  function issued(who, secret, page, kind) {
    const link = page ? `${location.origin}${page}#token=${encodeURIComponent(secret)}` : null;
    const copy = (text, label) => {
      const button = el('button', { type: 'button', class: 'copy' }, label);
      button.addEventListener('click', async () => {
        try {
          await navigator.clipboard.writeText(text);
          button.textContent = 'Copied';
        } catch (e) {
          button.textContent = 'Select and copy by hand';
        }
      });
      return button;
    };
    $('issued').append(el('div', { class: 'issued', 'data-kind': kind },
      el('p', {}, `Token for ${who} — shown only now; give it to them privately:`),
      el('p', {}, el('code', { class: 'token' }, secret), ' ', copy(secret, 'Copy token')),
      link ? el('p', {}, 'Their link: ', el('a', { href: link, class: 'play-link' }, link), ' ', copy(link, 'Copy link')) : null));
  }

  async function showWebhooks() {
    const id = current();
    const answer = await api('GET', `/v1/campaigns/${id}/webhooks`, token);
    if (!answer.ok) {
      $('webhooks').replaceChildren();
      return;
    }
    const list = el('ul', { id: 'webhook-list' });
    for (const hook of answer.data.webhooks) {
      const button = el('button', { type: 'button' }, 'Delivery log');
      const log = el('div', { class: 'deliveries' });
      button.addEventListener('click', async () => {
        const d = await api('GET', `/v1/campaigns/${id}/webhooks/${hook.id}/deliveries`, token);
        log.replaceChildren(d.ok ? el('ul', {}, d.data.deliveries.length ? d.data.deliveries.map((x) => el('li', {},
          `${x.attempted_at} · attempt ${x.attempt} · ${x.delivered ? 'delivered' : 'not delivered'} · ${x.status_code || ''} ${x.error || ''} (${x.duration_ms} ms)`)) : el('li', {}, 'No deliveries yet.')) : el('p', {}, d.detail));
      });
      list.append(el('li', {}, `${hook.url} — ${hook.active ? 'active' : `disabled: ${hook.disabled_reason || ''}`} `, button, log));
    }
    $('webhooks').replaceChildren(el('h3', {}, 'Webhooks'), answer.data.webhooks.length ? list : el('p', {}, 'None registered.'));
  }
})();
