use switchboard::client::Client;
use switchboard::jsonrpc::memory;
use switchboard::server::Server;
use switchboard::skills::{SkillSet, SkillSource, Skills, SkillsExt};
use switchboard::types::Implementation;

#[tokio::test]
async fn a_skill_is_published_listed_and_loaded_verified() {
    // A folder of skills works the same: SkillSet::from_dir("skills")?, and after build,
    // skills.watch(&server)? keeps the digests in step with the files.
    let skills = SkillSet::new().with(
        SkillSource::new("git-workflow")
            .file("SKILL.md", "---\nname: git-workflow\ndescription: Branch and commit our way\n---\nRebase, then merge.\n")
            .file("templates/commit.txt", "area: what now works\n"),
    );
    let server = Server::builder(Implementation::new("acme", "1.0")).skills(&skills).build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let session = Client::builder(Implementation::new("host", "1.0")).build().connect(a).await.unwrap();
    let host = Skills::new(&session);
    let skill = host.find("git-workflow").await.unwrap(); // the entry: nothing read yet
    let loaded = host.load(&skill).await.unwrap(); // SKILL.md: size, digest, frontmatter verified
    assert!(loaded.text.contains("Rebase"));
    let file = host.read(&skill, "skill://git-workflow/templates/commit.txt").await.unwrap();
    assert_eq!(file, b"area: what now works\n");
}
