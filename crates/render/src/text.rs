pub struct ForumText;
pub fn outcome_text() {}
