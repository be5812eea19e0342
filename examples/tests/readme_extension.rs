use serde::{Deserialize, Serialize};
use switchboard::client::{Client, RequestOptions};
use switchboard::jsonrpc::memory;
use switchboard::server::Server;
use switchboard::types::catalogue::{Method, RequestMethod};
use switchboard::types::Implementation;

/// `acme/echo`: a vendor method, with typed params and result.
struct Echo;
impl Method for Echo { const NAME: &'static str = "acme/echo"; }
impl RequestMethod for Echo { type Params = Text; type Result = Text; }
#[derive(Serialize, Deserialize)]
struct Text { text: String }

#[tokio::test]
async fn an_extension_method_round_trips() {
    let server = Server::builder(Implementation::new("acme", "1.0"))
        .request::<Echo, _, _>(|p: Text, _cx| async move { Ok(Text { text: p.text.to_uppercase() }) })
        .build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let session = Client::builder(Implementation::new("host", "1.0")).build().connect(a).await.unwrap();
    let r: Text = session.request(Echo::NAME, Text { text: "hi".into() }, RequestOptions::default()).await.unwrap();
    assert_eq!(r.text, "HI");
}
