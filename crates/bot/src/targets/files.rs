//! Files: one file per outcome, for a moderator or a forum-side script to post on a forum the
//! bot cannot post to (phpBB, SMF, vBulletin, ProBoards: `--format bbcode`).

use std::path::Path;

use super::{Deliver, Delivery};
use crate::feed::FeedOutcome;
use crate::{BotError, Format};

/// Writes each outcome under `dir`, in `format`.
pub(crate) struct Files<'a> {
    dir: &'a Path,
    format: Format,
}

impl<'a> Files<'a> {
    pub(crate) fn new(dir: &'a Path, format: Format) -> Self {
        Self { dir, format }
    }
}

impl Deliver for Files<'_> {
    /// Writes one outcome to `<dir>/<campaign>/<position>-<outcome>.<ext>` (through a temporary
    /// file, so a reader never sees half of it); a file already there with the same text is the
    /// one written before a crash. The acknowledgement names the file.
    async fn deliver(&mut self, outcome: &FeedOutcome) -> Result<Delivery, BotError> {
        let name = format!("{:010}-{}.{}", outcome.position, outcome.id, self.format.extension());
        let folder = self.dir.join(outcome.campaign_id.to_string());
        let path = folder.join(&name);
        let text = outcome.text.in_format(self.format);
        let written = format!("file:{}/{name}", outcome.campaign_id);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
            return Ok(Delivery::Recovered(written));
        }
        let fail = |e: std::io::Error| BotError::Other(format!("writing {}: {e}", path.display()));
        std::fs::create_dir_all(&folder).map_err(fail)?;
        let partial = folder.join(format!(".{name}.partial"));
        std::fs::write(&partial, text).map_err(fail)?;
        std::fs::rename(&partial, &path).map_err(fail)?;
        Ok(Delivery::Posted(written))
    }
}
