// The walk's part for History's names and Try a tool (issue 30, items 4
// and 5), kept apart from walk.mjs: calls on /mcp, on a server's endpoint
// and on a profile's, and of an unknown server and tool, named the same
// way in History; a tool tried from its server's Tools tab with a text, an
// image and a tool error; and a History row run again, its redacted value
// marked to type again. Every check throws with what it saw.

// names checks History's names. With a daemon (not the fake) it first
// makes the calls through mcpSession: alpha's echo on /mcp, /mcp/alpha and
// the profile coding, then nosuch__tool and alpha__nosuch on /mcp.
export async function walkNames({ page, go, shotBoth, mcpSession, fake, scheme, setStep }) {
  setStep('history: the same names on /mcp, /mcp/<server> and a profile; unknown server and tool marked');
  if (!fake) {
    const call = async (path, name) => {
      try {
        await (await mcpSession(path))('named', name, { text: 'named the same way' });
      } catch (e) {
        if (!/unknown tool/.test(String(e?.message))) throw e;
      }
    };
    await call('/mcp', 'alpha__echo');
    await call('/mcp/alpha', 'echo');
    await call('/mcp/p/coding', 'alpha__echo');
    await call('/mcp', 'nosuch__tool');
    await call('/mcp', 'alpha__nosuch');
  }
  await go('history');
  const rows = page.locator('.scroller a.tr');
  if (fake) await rows.first().waitFor();
  else {
    // The search applies 300 ms after typing: wait for its five calls alone.
    await page.getByLabel('Free-text search').fill('named the same way');
    await page.waitForFunction(() => document.querySelectorAll('.scroller a.tr').length === 5 && /^5 calls loaded/.test(document.querySelector('.table .foot')?.textContent.trim() ?? ''), null, { timeout: 20000 });
    await shotBoth('history-names', scheme);
  }
  const cells = async (row) => (await row.locator('[role="cell"]').allInnerTexts()).map((s) => s.trim());
  const seen = [];
  for (let i = 0; i < Math.min(await rows.count(), 400); i++) {
    const c = await cells(rows.nth(i));
    seen.push(c);
  }
  const echo = seen.filter((c) => c[2] === 'echo');
  if (!fake && (echo.length !== 3 || echo.some((c) => c[1] !== 'alpha' || c[3] !== 'cli · switchboard-e2e')))
    throw new Error(`History's echo rows (server, tool, client): ${JSON.stringify(echo.map((c) => c.slice(1, 4)))}`);
  // Unknown ones (the search above does not find them: look at all).
  await page.getByLabel('Free-text search').fill('');
  await page.getByLabel('Outcome').selectOption('protocol_error');
  await page.locator('.scroller a.tr').first().waitFor({ timeout: 10000 });
  await page.waitForTimeout(400);
  const errRows = page.locator('.scroller a.tr');
  const all = [];
  for (let i = 0; i < Math.min(await errRows.count(), 60); i++) all.push(await cells(errRows.nth(i)));
  const noServer = all.findIndex((c) => c[1] === 'nosuch (unknown)' && c[2] === 'tool');
  const noTool = all.findIndex((c) => c[2] === 'nosuch (unknown)' && c[1] !== 'nosuch (unknown)' && c[1] !== '—');
  if (noServer < 0 || noTool < 0) throw new Error(`History's protocol errors do not mark the unknown server and tool: ${JSON.stringify(all.slice(0, 8))}`);
  await shotBoth('history-unknown', scheme);
  await errRows.nth(noTool).click();
  const dlg = page.locator('dialog[open]');
  const unknown = await dlg.locator('[data-detail-unknown]').innerText();
  if (!/offers no tool "nosuch"/.test(unknown)) throw new Error(`an unknown tool's detail says ${unknown}`);
  const callLine = await dlg.locator('[data-detail-call]').innerText();
  if (!/__nosuch/.test(callLine)) throw new Error(`an unknown tool's detail keeps not the name the client used: ${callLine}`);
  await shotBoth('history-unknown-tool-detail', scheme);
  await page.keyboard.press('Escape');
  await dlg.waitFor({ state: 'detached' });
  await page.getByLabel('Outcome').selectOption('');
  // A profile's call: the endpoint says so, the names are /mcp's.
  await page.getByLabel('Free-text search').fill(fake ? '' : 'named the same way');
  // The fake's live calls (Cursor's, on /mcp, one every 4 s) would push its
  // profile's calls further down the longer the walk: VS Code's alone.
  if (fake) {
    await page.getByLabel('Client').fill('vscode');
    await page.waitForTimeout(400); // the filter applies 300 ms after typing
  }
  if (!fake) await page.waitForFunction(() => /^5 calls loaded/.test(document.querySelector('.table .foot')?.textContent.trim() ?? ''), null, { timeout: 20000 });
  const profileRow = page.locator('.scroller a.tr').filter({ hasText: 'echo' });
  for (let i = 0; i < (await profileRow.count()) && i < 40; i++) {
    await profileRow.nth(i).click();
    await dlg.locator('[data-detail-call]').waitFor();
    const ep = await dlg.locator('dd.mono').last().innerText();
    if (/profile coding/.test(ep)) {
      const [server, tool] = [await dlg.locator('[data-detail-server]').innerText(), await dlg.locator('[data-detail-tool]').innerText()];
      if (server !== (fake ? 'everything' : 'alpha') || tool !== 'echo') throw new Error(`a profile call's detail: server ${server}, tool ${tool}`);
      await shotBoth('history-profile-call', scheme);
      await page.keyboard.press('Escape');
      await dlg.waitFor({ state: 'detached' });
      if (fake) await page.getByLabel('Client').fill('');
      return `names: ${echo.length} echo rows alike, unknown server and tool marked, a profile's call read as ${server} · ${tool}`;
    }
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
  }
  throw new Error('no call of a profile in History');
}

// walkTry tries server's tools from its Tools tab (a text, an image, a
// tool error, a form with a wrong value first), then runs the form call
// again from History: its redacted value is marked and must be typed again.
export async function walkTry({ page, go, shot, shotBoth, server, fake, scheme, setStep }) {
  const T = fake ? { text: 'echo', image: 'getTinyImage', error: 'printEnv', form: 'echo', secret: 'apiKey' } : { text: 'echo', image: 'image', error: 'fail', form: 'form', secret: 'apiKey' };
  const open = async (tool) => {
    await go(`servers/${server}`);
    await page.getByRole('tab', { name: 'Tools' }).click();
    await page.locator(`button[data-try="${tool}"]`).click();
    const dlg = page.locator('dialog[open]');
    await dlg.locator('#try-form').waitFor({ timeout: 15000 });
    return dlg;
  };
  const close = async (dlg) => {
    await dlg.getByRole('button', { name: 'Close' }).last().click();
    await dlg.waitFor({ state: 'detached' });
  };
  setStep('try a tool: text');
  let dlg = await open(T.text);
  await dlg.locator('#try-form input[type="text"]').first().fill('hello from Try');
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  const text = dlg.locator('[data-try-result] [data-block="text"]').first();
  await text.waitFor({ timeout: 20000 });
  if (!/hello from Try/.test(await text.innerText())) throw new Error(`Try ${T.text} answered ${await text.innerText()}`);
  await shotBoth('try-text', scheme);
  await close(dlg);

  setStep('try a tool: an image');
  dlg = await open(T.image);
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  const img = dlg.locator('[data-try-result] [data-block="image"] img');
  await img.waitFor({ timeout: 20000 });
  const width = await img.evaluate((el) => (el.complete ? el.naturalWidth : 0));
  if (!(width > 0)) throw new Error(`the image result did not load (natural width ${width})`);
  await shotBoth('try-image', scheme);
  await close(dlg);

  setStep('try a tool: a tool error');
  dlg = await open(T.error);
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  await dlg.locator('[data-try-result] [data-result="error"]').waitFor({ timeout: 20000 });
  await shotBoth('try-tool-error', scheme);
  await close(dlg);

  setStep('try a tool: a form checked before the call, then called with a secret');
  dlg = await open(T.form);
  await dlg.locator('#try-form input[type="text"]').first().fill('typed in the form');
  if (!fake) {
    await dlg.locator('[data-field="count"] input').fill('2.5');
    await dlg.getByRole('button', { name: 'Call', exact: true }).click();
    const err = await dlg.locator('[data-field="count"] .field-error').innerText();
    if (!/not a whole number/.test(err)) throw new Error(`count 2.5 says ${err}`);
    await dlg.locator('[data-field="tags"] textarea').fill('["a", ');
    await dlg.getByRole('button', { name: 'Call', exact: true }).click();
    if (!/not JSON/.test(await dlg.locator('[data-field="tags"] .field-error').innerText())) throw new Error('bad JSON in tags is not refused');
    await shot(`try-form-checked-${scheme}`);
    await dlg.locator('[data-field="count"] input').fill('3');
    await dlg.locator('[data-field="tags"] textarea').fill('["a", "b"]');
    await dlg.locator('[data-field="color"] select').selectOption('green');
  }
  await dlg.locator(`[data-field="${T.secret}"] input`).fill('sk-typed-in-the-dashboard-0123456789');
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  await dlg.locator('[data-try-result] [data-block="text"]').first().waitFor({ timeout: 20000 });
  await close(dlg);

  setStep('run again from History: the redacted value marked, typed again');
  await go('history');
  await page.getByLabel('Client').fill('dashboard');
  // The filter applies 300 ms after typing: wait for the dashboard's row.
  const row = page.locator('.scroller a.tr').filter({ hasText: T.form }).filter({ hasText: 'dashboard' }).first();
  await row.waitFor({ timeout: 20000 });
  const client = (await row.locator('[role="cell"]').nth(3).innerText()).trim();
  if (client !== 'dashboard') throw new Error(`the tried call's Client reads ${client}`);
  await row.click();
  await page.locator('dialog[open] [data-run-again]').click();
  dlg = page.locator('dialog[open]');
  await dlg.locator('[data-redacted-note]').waitFor({ timeout: 15000 });
  if ((await dlg.locator(`[data-field="${T.secret}"][data-redacted]`).count()) !== 1) throw new Error(`the redacted ${T.secret} is not marked`);
  const kept = await dlg.locator('#try-form input[type="text"]').first().inputValue();
  if (kept !== 'typed in the form') throw new Error(`Run again's form starts from ${kept}`);
  await shotBoth('run-again', scheme);
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  if (!/type it again/.test(await dlg.locator(`[data-field="${T.secret}"] .field-error`).innerText())) throw new Error('a redacted value was sent');
  await dlg.locator(`[data-field="${T.secret}"] input`).fill('sk-typed-again-0123456789');
  await dlg.getByRole('button', { name: 'Call', exact: true }).click();
  await dlg.locator('[data-try-result] [data-block="text"]').first().waitFor({ timeout: 20000 });
  await close(dlg);
  return `try: ${T.text} (text), ${T.image} (a ${width}px image), ${T.error} (tool error), ${T.form} run again from History with its redacted ${T.secret} typed again`;
}
