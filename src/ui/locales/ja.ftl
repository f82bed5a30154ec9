# Authrim の画面（日本語）。
language-name = 日本語

continue-to = { $client } を続行するには
login-for-organization = { $organization } として { $client } を続行するには
signed-in-as = { $user } としてサインイン中
continue = 続行
cancel = キャンセル
done = 完了
back-to-account = アカウントに戻る
date-never = なし

error-title = エラー
error-heading = このリクエストを完了できません
error-detail = 詳細:
error-back = 元のアプリケーションに戻って、もう一度お試しください。
error-home = トップページへ
error-account = アカウントページへ

login-title = サインイン
login-heading = サインイン
login-username = ユーザー名またはメールアドレス
login-password = パスワード
login-submit = サインイン
login-passkey = パスキーでサインイン
passkey-not-used = パスキーは使用されませんでした。もう一度お試しいただくか、別の方法をお使いください。
passkey-name = このパスキーの名前
passkey-name-placeholder = 自分のノートPC

second-factor-title = 本人確認
second-factor-heading = 本人確認
second-factor-use-passkey = パスキーを使う
second-factor-code = 認証アプリのコード、またはリカバリーコード
second-factor-submit = 確認

select-title = アカウントの選択
select-heading = アカウントを選択
select-current = { $user } として続行
select-other = 別のアカウントを使う

consent-title = アクセスの許可
consent-heading = { $client } にアクセスを許可しますか？
consent-self-registered = 「{ $client }」はこのサービスに自ら登録したアプリケーションです。名前、ロゴ、リンクはアプリケーション自身によるもので、ここでは確認されていません。
consent-document-host = このアプリケーションはここに登録されていません。<strong>{ $host }</strong> 上のアドレスで識別されています。
consent-asks = { $client } が求めている権限:
consent-resources = アクセス先:
consent-allow = 許可
consent-deny = 拒否
consent-home = { $client } について
consent-policy = プライバシーポリシー
consent-terms = 利用規約
request-done-title = リクエスト完了
request-done-heading = このリクエストは完了しています
request-done-body-client = { $client } のリクエストにはすでに回答済みで、結果はアプリケーションに返されています。
request-done-body = このリクエストにはすでに回答済みで、結果はアプリケーションに返されています。
request-done-next = アプリケーションを使うには、アプリケーションに戻ってください (このページはもう不要です)。許可した内容の確認や取り消しはアカウントページで行えます。
request-done-to-client = { $client } へ移動
scope-openid = あなたが誰であるかを知る
scope-profile = 名前とプロフィールを見る
scope-email = メールアドレスを見る
scope-address = 住所を見る
scope-phone = 電話番号を見る
scope-offline_access = あなたが不在の間もアクセスを保持する

logout-title = サインアウト
logout-heading = { $product } からサインアウトしますか？
logout-submit = サインアウト
logout-not-asked = サインアウトを求めていない場合は、このページを閉じてください。サインインしたままになります。
signed-out-title = サインアウトしました
signed-out-heading = サインアウトしました
signed-out-apps = アプリケーションからサインアウトしています…
signed-out-close = このページを閉じてかまいません。
signed-out-sign-in-again = もう一度サインイン

form-post-title = アプリケーションに戻っています
form-post-heading = アプリケーションに戻っています

landing-title = ようこそ
landing-heading = ようこそ
landing-intro = これは OpenID Connect のサインインサービスです。アプリケーションからサインインのためにここへ案内されます。
landing-demo-heading = 試してみる
landing-demo-intro = デモモードが有効です。デモアプリケーションがここでサインインし、受け取ったトークンと userinfo の内容を表示します。
landing-demo = デモアプリケーションを開く
landing-apps-heading = アプリケーション
landing-links-heading = 移動先
landing-account = アカウント: パスキー、認証アプリ、リカバリーコード
landing-console = 管理コンソール: アプリケーション、ユーザー、鍵、監査ログ
landing-discovery = ディスカバリー文書（開発者向け）
landing-docs = ドキュメント: Authrim のソースリポジトリの <code>README.md</code> と <code>docs/</code> フォルダー

demo-title = デモアプリケーション
demo-heading = デモアプリケーション
demo-intro = このアプリケーションは Authrim の中でクライアント <code>demo-client</code> として動きます。ほかのアプリケーションと同じく、state、nonce、PKCE を付けてサインインページへ案内し、返された認可コードをトークンエンドポイントで引き換え、ID トークンを検証して userinfo に問い合わせ、そのすべてを表示します。
demo-credentials = デモユーザーでサインインしてください。ユーザー名とパスワードは Authrim を起動した端末に表示されています。
demo-sign-in = デモにサインイン
demo-signed-out = サインアウトしました。デモアプリケーションの依頼により、Authrim がここへ戻しました。
demo-back-home = スタートページに戻る
demo-signed-in-title = デモにサインインしました
demo-signed-in-heading = デモにサインインしました
demo-signed-in-intro = デモアプリケーションが認可コードをトークンエンドポイントで引き換えました。受け取った内容は次のとおりです。
demo-token-response = トークンレスポンス
demo-id-token = ID トークンのクレーム
demo-access-token = アクセストークンのクレーム
demo-userinfo = userinfo の応答
demo-claim = クレーム
demo-value = 値
demo-sign-out = サインアウト
demo-sign-in-again = もう一度サインイン
passkeys-off-ip = パスキーは無効です: このサーバーのアドレス（{ $issuer }）は IP アドレスで、パスキーにはドメイン名が必要です。有効にするには <code>AUTHRIM_ISSUER={ $suggest }</code> を付けて Authrim を起動し、そのアドレスで開いてください。
passkeys-off-disabled = このサーバーではパスキーが無効になっています。管理者は設定 <code>passkeys = true</code>（<code>AUTHRIM_PASSKEYS=true</code>）で有効にできます。

account-title = アカウント
account-heading = アカウント
account-methods = サインイン方法
factor-kind-passkey = パスキー
factor-kind-totp = 認証アプリ
account-added = { $date } に追加
account-last-used = 最終使用 { $date }
account-remove = 削除
account-remove-named = { $name } を削除
account-password-only = パスワードのみでサインインしています。
account-reauth-note = サインインから時間が経っているため、変更の前にもう一度サインインしていただきます。
account-add-passkey = パスキーを追加
account-add-totp = 認証アプリを追加
account-recovery = リカバリーコード
account-recovery-left = { $count ->
    [0] リカバリーコードはありません。ほかの方法を失ったときにサインインできるよう、作成しておいてください。
   *[other] 未使用のリカバリーコードが { $count } 個あります。ほかの方法を失ったとき、それぞれ一度だけサインインに使えます。
}
account-recovery-new = 新しいリカバリーコードを作成
account-sign-out = サインアウト
notice-passkey = パスキーを追加しました。
notice-totp = 認証アプリを追加しました。
notice-removed = サインイン方法を削除しました。

account-password = パスワード
account-change-password = パスワードを変更
notice-password = パスワードを変更しました。ほかのセッションはサインアウトされました。
password-title = パスワードの変更
password-heading = パスワードの変更
password-current = 現在のパスワード
password-new = 新しいパスワード（{ $min } 文字以上）
password-confirm = 新しいパスワード（確認）
password-submit = パスワードを変更
password-mismatch = 2 つの新しいパスワードが一致しません。
password-current-wrong = 現在のパスワードが正しくありません。
password-too-weak = 新しいパスワードは { $min } 文字以上 1024 文字以下にしてください。

reauth-title = もう一度サインイン
reauth-heading = ご本人であることを確認します
reauth-body = サインイン方法を変更するには、先にもう一度サインインしてください（前回のサインインから { $minutes } 分以上経過しています）。
reauth-link = もう一度サインイン
not-signed-in-title = サインインしていません
not-signed-in-heading = サインインしていません
not-signed-in-body = サインインが完了しなかったか、そのリンクはすでに使用されています。
not-signed-in-link = アカウントにサインイン
failed-title = 変更されていません
failed-heading = 何も変更されていません
failed-passkey-expired = パスキーは追加されませんでした。ページの有効期限が切れています。もう一度お試しください。
failed-passkey-refused = パスキーは追加されませんでした。デバイスの応答を検証できなかったか、すでに登録されています。
failed-totp-expired = 認証アプリは追加されませんでした。ページの有効期限が切れています。もう一度お試しください。
failed-recovery-download = このページの有効期限が切れたため、コードをダウンロードできません。新しいリカバリーコードを作成し、すぐにダウンロードしてください。

passkey-setup-title = パスキーを追加
passkey-setup-heading = パスキーを追加
passkey-setup-body = 画面ロック、指紋、またはセキュリティキーでの確認をデバイスが求めます。
passkey-create = パスキーを作成
passkey-needs-js = このブラウザでパスキーを使うには JavaScript が必要です。
totp-title = 認証アプリを追加
totp-heading = 認証アプリを追加
totp-scan = 認証アプリでこのコードを読み取ってください:
totp-qr-label = 認証アプリ用のシークレットの QR コード
totp-type-key = または次のキーを入力してください:
totp-code = アプリに表示される 6 桁のコード
totp-name = このアプリの名前
totp-name-placeholder = スマートフォン
totp-submit = 追加
totp-wrong = コードが正しくありません。アプリに今表示されているコードを入力してください。
recovery-title = リカバリーコード
recovery-heading = リカバリーコード
recovery-body = 安全な場所に保管してください。それぞれ一度だけサインインに使えます。表示されるのは今回だけで、以前のコードは使えなくなりました。

err-form-expired = このフォームは有効期限が切れているか、すでに使用されています。アプリケーションに戻って、もう一度サインインしてください。
login-expired = このサインインページは長時間開かれていたため、最初からやり直しになりました。アプリケーションに進むには、もう一度サインインしてください。
err-second-factor-expired = このフォームは有効期限が切れています。アプリケーションに戻って、もう一度サインインしてください。
err-too-many = サインインの失敗が多すぎます。数分待ってからもう一度お試しください。
err-busy = サービスが混み合っています。しばらくしてからもう一度お試しください。
err-unavailable = サービスが一時的に利用できません。もう一度お試しください。
err-no-cookie = このフォームに必要な Cookie がブラウザから送られてきませんでした。このサイトの Cookie を許可して、もう一度お試しください。
err-client-gone = ここへ案内したアプリケーションは、もう登録されていません。
err-session-ended = セッションが終了しました。アプリケーションに戻って、もう一度サインインしてください。
err-choose = 「許可」か「拒否」を選んでください。
err-choose-account = 続行するアカウントを選んでください。
err-incorrect = ユーザー名またはパスワードが正しくありません。
err-needs-passkey = ここでのサインインにはパスキーが必要です。お持ちのパスキーを使うか、管理者に設定を依頼してください。
err-needs-passkey-none = ここでのサインインにはパスキーが必要ですが、アカウントにはまだありません。管理者に設定を依頼するか、アカウントページで追加してください。
err-needs-factor-none = ここでのサインインには第二要素（パスキーまたは認証アプリ）が必要ですが、アカウントにはまだありません。管理者に設定を依頼するか、アカウントページで追加してください。
err-second-factor-wrong = 確認できませんでした。コードが正しくないか使用済みです。または、パスキーが拒否されました。
err-passkey-expired = パスキーでのサインインの有効期限が切れました。もう一度お試しください。
err-passkey-refused = そのパスキーではサインインできませんでした。もう一度お試しいただくか、パスワードをお使いください。
err-bad-request = アプリケーションから送られたサインインのリクエストは使用できません。
err-request-too-large = リクエストが大きすぎます。
err-not-found = このアドレスにページはありません。
err-method = このページはその方法では使用できません。戻ってもう一度お試しください。
err-form-only = このアドレスはサインインフォームの送信先です。アプリケーションにサインインするには、アプリケーションからやり直してください。
err-no-client = リクエストにアプリケーションの指定（client_id）がありません。
err-request-uri-used = このサインインのリンクは有効期限が切れているか、すでに使用されています。アプリケーションに戻って、最初からやり直してください。
err-bad-redirect = 戻り先のアドレスが正しくありません。
err-form-not-post = このページにはフォームの送信で来る必要があります。
err-form-unreadable = フォームが大きすぎるか、読み取れませんでした。
err-logout-unreadable = サインアウトのフォームを読み取れませんでした。
err-logout-expired = このサインアウトのフォームは有効期限が切れているか、このブラウザ用のものではありません。もう一度お試しください。
err-logout-invalid = このサインアウトのリクエストは使用できません。
err-account-form-expired = このフォームは有効期限が切れています。アカウントページを再読み込みして、もう一度お試しください。
err-account-form-unreadable = このフォームを読み取れませんでした。アカウントページを再読み込みして、もう一度お試しください。
err-demo-query = コールバックのクエリ文字列が正しくありません。
err-demo-failed = 認可に失敗しました。
err-demo-no-code = このページは、このサーバーが発行した認可コードを必要とします。
err-demo-no-request = このサインインはここのデモアプリケーションが始めたものではないか、すでに終わっています。デモページからやり直してください。
err-demo-state = この応答の state は、デモアプリケーションが送ったものと一致しません。デモページからやり直してください。
err-demo-token = トークンエンドポイントがデモアプリケーションの認可コードを拒否したか、ID トークンの検証に失敗しました。
err-demo-userinfo = userinfo がデモアプリケーションのアクセストークンを拒否しました。

# 管理コンソール
copy = コピー
copied = コピーしました
console-title = 管理コンソール
console-heading = 管理コンソール
console-nav = コンソール
console-home = 概要
console-clients = クライアント
console-users = ユーザー
console-keys = 署名鍵
console-audit = 監査ログ
console-role-admin = 管理者
console-role-auditor = 監査者（閲覧のみ）
console-sign-in = コンソールにサインイン
console-denied-heading = コンソールへのアクセス権がありません
console-denied = { $user } にはコンソールのロールがありません。管理者がユーザーのページ、または <code>authrim user update NAME --role admin</code> で付与できます。
console-needs-factor-heading = 先に二要素目を追加してください
console-needs-factor = コンソールには二要素目（パスキーまたは認証アプリ）が必要です。アカウントページで追加してから戻ってください。
console-go-account = アカウントページへ
console-read-only-heading = 閲覧のみ
console-read-only = あなたのロールでは閲覧のみ可能で、変更はできません。
console-refused-heading = 実行されませんでした
console-refused = 次の理由で実行されませんでした:
console-not-found-heading = 見つかりません
console-not-found = ここには何もありません。削除された可能性があります。
console-delete-self = 自分自身は削除できません。別の管理者に依頼してください。
console-done-created = 作成しました。
console-done-saved = 保存しました。
console-done-deleted = 削除しました。
console-done-ended = セッションを終了しました。
console-done-removed = 削除しました。
console-done-rotated = ローテーションを開始しました。新しい鍵は公開済みで、公開猶予の後に署名を始めます。
console-count-clients = クライアント
console-count-users = ユーザー
console-count-algs = 署名アルゴリズム
console-recent = 最近のイベント
console-audit-all = 監査ログ全体
console-no-events = イベントはありません。
console-col-time = 時刻
console-col-event = イベント
console-col-user = ユーザー
console-col-client = クライアント
console-col-address = アドレス
console-col-detail = 詳細
console-col-client-id = クライアント ID
console-col-name = 名前
console-col-method = クライアント認証
console-col-grants = グラントタイプ
console-response-types = 認可エンドポイントからのトークン（ハイブリッドとインプリシット）
console-response-types-hint = 必要なアプリケーションだけに: RFC 9700 はブラウザーでトークンを返すことを推奨していません。code を含むタイプにはサインインのグラントも必要です。
console-col-created = 作成日時
console-col-username = ユーザー名
console-col-email = メールアドレス
console-col-roles = ロール
console-col-status = 状態
console-col-signed-in = サインイン日時
console-col-how = 方法
console-col-agent = ブラウザー
console-col-clients = アプリケーション
console-col-alg = アルゴリズム
console-col-state = 状態
console-col-activated = 署名開始
console-col-retired = 退役
console-no-clients = クライアントはまだありません。
console-client-new = 新しいクライアント
console-client-title = クライアント
console-client-heading = クライアント { $id }
console-client-metadata = 登録情報
console-client-id-hint = 空欄にすると自動で生成されます。
console-redirect-uris = リダイレクト URI
console-one-per-line = 1 行に 1 つ。完全一致で照合します。
console-logout-uris = ログアウト後のリダイレクト URI
console-scope = 要求できるスコープ
console-jwks-uri = JWK Set の URL（private_key_jwt 用）
console-backchannel-uri = バックチャネルログアウトの URL
console-initiate-login-uri = サインイン開始 URL (https)
console-initiate-login-uri-hint = アプリケーション自身がサインインを開始する URL (OpenID Connect のサードパーティ開始ログイン)。設定すると、スタートページと利用者のアカウントページに表示されます。
console-refresh-grace = リフレッシュトークン再利用の猶予 (秒)
console-refresh-grace-hint = 置き換えられたばかりのリフレッシュトークンでの再試行に、この間は同じ新しいトークンを返します (複数のタブで開かれたアプリ向け)。0: 猶予なし (再利用はすべてのサインインを終了します)。空欄: サーバーの設定。
console-sign-in-policy = サインインのポリシー
console-require-mfa = 二要素目を必須にする
console-require-passkey = パスキーを必須にする
console-create = 作成
console-save = 保存
console-danger = 取り消せない操作
console-rotate-secret = 新しいシークレット
console-delete-client = このクライアントを削除
console-back-clients = クライアント一覧へ戻る
console-client-created = クライアントを作成しました
console-secret-title = クライアントシークレット
console-secret-heading = 新しいクライアントシークレット
console-secret-once = 今すぐシークレットをコピーしてください。表示は一度だけで、後から読むことはできません。以前のシークレットは無効になりました。
console-secret-done = コピーしました
console-search-users = ユーザー名、メールアドレス、ID で検索
console-search = 検索
console-users-shown = { $total } 件中 { $shown } 件を表示しています。
console-user-new = 新しいユーザー
console-user-title = ユーザー
console-user-heading = ユーザー { $user }
console-user-id = ID (sub): { $id }
console-updated = { $date } 更新
console-user-profile = プロフィール
console-email-verified = メールアドレス確認済み
console-password = パスワード
console-password-hint = 8 文字以上。
console-new-password = 新しいパスワード
console-new-password-hint = 空欄なら現在のパスワードのままです。
console-user-disabled = 無効（サインインできず、セッションは終了します）
console-disabled = 無効
console-active = 有効
console-factors = 二要素目
console-no-factors = ありません。
console-reset-factors = すべての要素とリカバリーコードを削除
console-sessions = セッション
console-no-sessions = 有効なセッションはありません。
console-end-session = 終了
console-end-session-at = { $date } にサインインしたセッションを終了
console-end-all = すべてのセッションを終了
console-user-events = このユーザーのイベント
console-delete-user = このユーザーを削除
console-back-users = ユーザー一覧へ戻る
console-keys-intro = ローテーションすると新しい鍵がすぐに公開され、{ $minutes } 分後に署名を始めます。以前の鍵は、そのトークンが期限切れになるまで公開されたままです。
console-key-active = 署名中
console-key-next = 公開済み（署名前）
console-key-retired = 退役
console-rotate = 鍵のローテーション
console-rotate-submit = ローテーションを開始
console-filter-user = ユーザー（ユーザー名・メールアドレス・ID）
console-filter-client = クライアント（ID または名前）
console-filter-since = 開始日
console-filter-limit = 最大件数
console-filter = 絞り込む
console-col-actor = 実行者
console-all-events = すべてのイベント
console-actor-token = 管理 API トークン
console-actor-cli = コマンドライン
console-actor-bootstrap = 初回起動（bootstrap_admin）
console-actor-server = Authrim
console-no-such-user = 「{ $user }」というユーザー（ユーザー名・メールアドレス・ID）はおらず、その ID のイベントもありません。
console-no-such-client = ID または名前が「{ $client }」のクライアントはなく、その ID のイベントもありません。
console-no-such-event = 「{ $event }」は Authrim が記録するイベントの種類ではありません。
console-bad-day = 日付の形式 (YYYY-MM-DD) ではないため、無視しました。
console-secret-once-new = 今すぐシークレットをコピーしてください。表示は一度だけで、後から読むことはできません。
console-type-question = どの種類のアプリケーションですか？
console-type-web = Web アプリケーション
console-type-web-hint = サーバー上で動き、シークレットを保管できます（従来型の Web サイト、BFF など）。
console-type-spa = シングルページアプリケーション
console-type-spa-hint = ブラウザー上の JavaScript。シークレットなし、PKCE を使い、自身のオリジンからトークンエンドポイントを呼びます。
console-type-native = ネイティブ・モバイルアプリ
console-type-native-hint = スマートフォンやコンピューターにインストールされるアプリ。シークレットなし、PKCE を使い、独自スキームかローカルポートで戻ります。
console-type-m2m = マシン間通信
console-type-m2m-hint = ユーザーなしで自身として API を呼ぶサービス。シークレットとクライアントクレデンシャルグラントを使います。
console-type-mcp = MCP クライアント・エージェント
console-type-mcp-hint = ユーザーの代わりに動く AI エージェントや MCP クライアント。シークレットなし、PKCE、ローカルまたは https のリダイレクト、リフレッシュトークン。
console-continue = 次へ
console-type-chosen = 種類: { $type }。
console-type-change = 別の種類を選ぶ
console-redirect-hint-web = https のアドレスを使ってください（開発中の localhost のみ http 可）。
console-redirect-hint-spa = サインインするページの https アドレスを使ってください（開発中の localhost のみ http 可）。そのオリジンからトークンエンドポイントを呼べます。
console-redirect-hint-native = アプリ独自のスキーム（com.example.app:/callback）、ローカルポート（http://127.0.0.1/callback、ポートは任意）、または https を使ってください。
console-redirect-hint-mcp = ローカルポート（http://127.0.0.1/callback、ポートは任意）、アプリ独自のスキーム、または https を使ってください。
console-advanced = 詳細設定
console-grant-code = ユーザーをサインインさせる
console-grant-refresh = サインイン状態を保つ（リフレッシュトークン）
console-grant-client-credentials = ユーザーなしで自身として API を呼ぶ
console-grant-token-exchange = 別の API 用にトークンを交換する
console-method-client_secret_basic = シークレット（Authorization ヘッダー）
console-method-client_secret_post = シークレット（リクエスト本文）
console-method-client_secret_jwt = シークレットで署名した JWT
console-method-private_key_jwt = アプリケーションの秘密鍵で署名した JWT
console-method-none = なし（公開アプリケーション、PKCE を使用）
console-scope-hint = スペース区切り: openid、profile、email、offline_access と API のスコープ。
console-created-public = このアプリケーションにはシークレットがありません。サインインのたびに PKCE で本人性を示します。
console-issuer = Issuer（発行者）
console-discovery = ディスカバリー文書
console-client-secret = クライアントシークレット
console-settings-heading = アプリケーションの設定
console-settings-hint = アプリケーションの OpenID Connect ライブラリー向けの環境変数です:
console-copy-settings = 設定をコピー
console-go-client = クライアントのページへ
console-uri-spaces = 「{ $uri }」に空白か制御文字が含まれています。1 行に 1 つ、空白なしで書いてください。
console-uri-not-absolute = 「{ $uri }」は完全なアドレスではありません。https://app.example/callback のようにスキームとホストを含めて書いてください。
console-uri-fragment = 「{ $uri }」には # 以降の部分がありますが、リダイレクト先には使えません。
console-uri-userinfo = 「{ $uri }」にはホストの前にユーザー名かパスワードがありますが、ここでは使えません。
console-uri-http = 「{ $uri }」は http を使っていますが、http はこのコンピューター上のアドレス（localhost、127.0.0.1）だけに使えます。https を使ってください。
console-uri-scheme = 「{ $uri }」のスキームは使えません。https、localhost の http、またはアプリ独自のスキーム（com.example.app:/callback）を使ってください。
console-uri-web-only = 「{ $uri }」は Web のアドレスではありません。この種類のアプリケーションは https のアドレスに戻ります（localhost のみ http 可）。
console-err-client-id = クライアント ID は 128 文字以内の印字可能な文字で、空白、「:」、「%」は使えません。
console-err-client-id-taken = このクライアント ID はすでに別のクライアントが使っています。
console-err-name = 名前は 1 行、200 文字以内です。
console-err-no-redirects = マシン間通信のクライアントはユーザーをサインインさせないので、リダイレクト先はありません。空欄にしてください。
console-err-no-grants = アプリケーションがトークンを得る方法を 1 つ以上選んでください。
console-err-needs-redirect = ユーザーをサインインさせるアプリケーションには、サインイン後に戻るリダイレクト URI が 1 つ以上必要です。
console-err-public-grant = シークレットのないアプリケーションは、自身として API を呼んだりトークンを交換したりできません。シークレットか鍵による認証を選んでください。
console-err-needs-keys = 秘密鍵による認証には、アプリケーションが公開鍵を公開する JWK Set の URL が必要です。
console-err-scope = 「{ $scope }」はスコープではありません。スコープはスペース区切りで、引用符やバックスラッシュは含められません。
console-err-grace = 再利用の猶予は 0 から { $max } までの整数 (秒) です。
console-err-other = サーバーが示した理由:
console-recovery-left = { $count ->
    [0] リカバリーコードはありません。
   *[other] リカバリーコードは残り { $count } 個です。
}
err-console-form-expired = このフォームは期限切れか、あなたのコンソールのセッションから送信されたものではありません。コンソールのページを再読み込みして、もう一度お試しください。

# 上流の ID プロバイダー
login-with = { $name } でサインイン
err-upstream-unknown = このサインイン方法はここでは提供されていません。
err-upstream-state = このサインインは期限切れか、別のブラウザーで開始されました。アプリケーションに戻って、もう一度お試しください。
err-upstream-unavailable = 現在 { $name } に接続できません。しばらくしてからもう一度お試しいただくか、別の方法でサインインしてください。
err-upstream-cancelled = { $name } でのサインインは完了しませんでした。
err-upstream-refused = { $name } からの応答を信頼できないため、サインインしていません。
err-upstream-domain = あなたの { $name } アカウントは、このサービスで許可されていません。
err-upstream-disabled = このサインインに紐付けられたアカウントは無効になっています。
err-upstream-no-account = あなたの { $name } アカウントに紐付けられたアカウントはありません。パスワードでサインインしてから、アカウントページで紐付けてください。
err-upstream-email-taken = このメールアドレスを使うアカウントがすでにあります。パスワードでサインインしてから、アカウントページで { $name } アカウントを紐付けてください。
err-upstream-linked-elsewhere = この { $name } アカウントは別のユーザーに紐付けられています。
err-upstream-already-linked = あなたのアカウントはすでに { $name } アカウントに紐付けられています。先にその紐付けを解除してください。
err-directory-unreachable = あなたのアカウントを管理するディレクトリに現在接続できません。しばらくしてからもう一度お試しください。
err-directory-name-taken = この名前またはメールアドレスはすでに別のアカウントで使われているため、ディレクトリのアカウントを追加できません。管理者にお問い合わせください。
err-directory-password-read-only = パスワードは組織のディレクトリで管理されているため、ここでは変更できません。組織がパスワードを管理している場所で変更してください。
account-linked = 紐付けたアカウント
account-link = 紐付ける
account-link-named = { $name } アカウントを紐付ける
account-unlink = 解除
account-unlink-named = { $name } との紐付けを解除
notice-linked = アカウントを紐付けました。このアカウントでサインインできます。
notice-unlinked = 紐付けを解除しました。
account-profile = プロフィール
account-edit-profile = 名前、メールアドレス、言語を変更
profile-title = プロフィール
profile-heading = プロフィール
profile-name = 氏名
profile-given-name = 名
profile-family-name = 姓
profile-email = メールアドレス
profile-email-hint = 新しいアドレスは、確認されていないものとしてアプリケーションに伝わります。
profile-locale = 言語と地域
profile-locale-hint = ja-JP や en-GB のような言語タグ。アプリケーションが利用することがあります。
profile-submit = 保存
profile-too-long = 256 文字を超えているか、制御文字を含む項目があります。
profile-email-invalid = メールアドレスではありません。
profile-email-taken = このメールアドレスで別のアカウントがサインインしています。
profile-invalid = このプロフィールは保存できません:
notice-profile = プロフィールを保存しました。

# パスワードの再設定
login-forgot = パスワードをお忘れですか?
forgot-title = パスワードの再設定
forgot-heading = パスワードの再設定
forgot-intro = ユーザー名またはメールアドレスを入力してください。アカウントがあれば、新しいパスワードを設定するためのリンクをそのメールアドレスに送ります。
forgot-submit = リンクを送信
forgot-sent = その名前のアカウントがあれば、新しいパスワードを設定するためのリンクをメールアドレスに送信しました。
forgot-sent-note = リンクは一度だけ、短い間だけ有効です。届かない場合は迷惑メールフォルダーを確認するか、管理者にお問い合わせください。
reset-title = 新しいパスワードの設定
reset-heading = 新しいパスワードの設定
reset-submit = パスワードを設定
reset-done = パスワードを変更し、アカウントのすべてのセッションをサインアウトしました。アプリケーションに戻り、新しいパスワードでサインインしてください。
err-reset-link = このリンクは使えません。すでに使われたか、期限が切れています。サインインページから新しいリンクを依頼してください。
err-reset-off = ここではパスワードの再設定を利用できません。管理者にお問い合わせください。
mail-reset-subject = { $product } のパスワードの再設定
mail-reset-body = { $product } アカウントのパスワードの再設定が依頼されました。新しいパスワードを設定するには、{ $minutes } 分以内に次のリンクを開いてください:

    { $link }

    心当たりがない場合は、このメールを無視してください。パスワードは変わりません。

# セルフ登録
login-no-account = アカウントをお持ちでない場合は
login-signup = 作成
signup-title = アカウントの作成
signup-heading = アカウントの作成
signup-username = ユーザー名
signup-field-email = メールアドレス
signup-field-name = 氏名
signup-field-given_name = 名
signup-field-family_name = 姓
signup-optional = (任意)
signup-password-hint = { $min } 文字以上。ユーザー名や、漏洩で知られたパスワードは使えません。
signup-submit = アカウントを作成
signup-sent = あと少しです。メールアドレスに送ったリンクを開いて完了してください。リンクの有効期間は限られています。
signup-done = アカウントの準備ができました。アプリケーションに戻ってサインインしてください。
signup-to-account = アカウントページへ
signup-verify-heading = メールアドレスの確認
signup-verify-submit = 確認してアカウントを作成
signup-missing = 必須の項目「{ $field }」が空です。
signup-password-length = パスワードは { $min } 文字以上 1024 文字以下にしてください。
signup-username-taken = このユーザー名は使えません。別のものを選んでください。
password-is-username = パスワードにユーザー名は使えません。
password-breached = このパスワードはデータ漏洩で知られています。別のものを選んでください。
err-signup-off = ここではアカウントを作成できません。
err-signup-link = このリンクは使えません。すでに使われたか、期限が切れています。もう一度登録してください。
mail-verify-subject = { $product } のメールアドレスの確認
mail-verify-body = { $product } アカウントの作成を完了するには、{ $hours } 時間以内に次のリンクを開いてください:

    { $link }

    心当たりがない場合は、このメールを無視してください。アカウントは作成されません。
signup-password-wrong = この登録で設定したパスワードではありません。
mail-signup-exists-subject = あなたのアドレスで { $product } アカウントの作成が試みられました
mail-signup-exists-body = このメールアドレスで { $product } の新しいアカウントの作成が試みられましたが、このアドレスにはすでにアカウントがあります(ユーザー名: { $username })。アカウントは作成されず、何も変更されていません。

    ご本人の場合は、そのアカウントでサインインしてください。パスワードを忘れた場合は、こちらで新しいパスワードを設定できます:

    { $link }

    心当たりがない場合は、このメールを無視してください。
signup-verify-username-taken = ユーザー名 { $username } は確認の前に使われてしまいました。別のユーザー名を選び、登録時に決めたパスワードを入力して、アカウントを作成してください。
err-signup-email-taken = このメールアドレスにはすでにアカウントがあります。そのアカウントでサインインするか、サインインページから新しいパスワードを設定してください。
err-too-many-requests = ここからのリクエストが多すぎます。数分待ってからもう一度お試しください。
account-email = メールアドレス: { $email }
account-email-verified = (確認済み)
account-email-unverified = (未確認)
account-send-verification = 確認用リンクを送信
profile-email-hint-mail = 新しいアドレスは、お送りするリンクを開くまで、アプリケーションには未確認として示されます。
notice-profile-verify = プロフィールを保存しました。新しいメールアドレスに送ったリンクを開いて確認してください。
notice-verify-sent = 確認用リンクをメールアドレスに送信しました。
# The account page: where the user is signed in, the applications they allowed.
account-sessions = サインイン中のブラウザー
account-sessions-intro = あなたのアカウントにサインインしているブラウザーやデバイスです。ここでサインアウトするとそのセッションは終了し、そこからサインインしたアプリケーションもそのセッションで得たアクセスを失います。
account-device = { $system } の { $browser }
account-device-unknown = 不明なブラウザー
account-session-this = このブラウザー
account-session-address = 接続元 { $address }
account-session-signed-in = サインイン:
account-session-seen = 最終利用:
account-session-end = サインアウト
account-session-end-named = { $date } にサインインした { $device } をサインアウト
notice-session-ended = そのセッションをサインアウトしました。
account-applications = 許可したアプリケーション
account-applications-intro = これらのアプリケーションは、表示の範囲でアカウントを利用できます。取り消すと、次回もう一度確認され、長期間のアクセスも終了します。
account-application-allowed = 許可:
account-application-withdraw = 取り消す
account-application-withdraw-named = { $name } のアクセスを取り消す
account-no-applications = まだどのアプリケーションも許可していません。
notice-withdrawn = アクセスを取り消しました。アプリケーションは次回もう一度確認します。
# Recovery codes: download and print, and the downloaded file's words.
recovery-download = ダウンロード
recovery-print = 印刷
recovery-file-heading = { $issuer } の { $user } のリカバリーコード
recovery-file-made = 作成日時: { $date }
recovery-file-body = 各コードは、他のサインイン方法が使えないときに一度だけサインインに使えます。このファイルは安全な場所に保管してください。
verify-email-title = メールアドレスの確認
verify-email-submit = メールアドレスを確認する
verify-email-done-heading = メールアドレスを確認しました
verify-email-done = メールアドレスが確認されました。
err-verify-email-link = このリンクは使えません。使用済みか期限切れ、またはその後アドレスが変更されています。アカウントページから新しいリンクを送信してください。
mail-verify-email-subject = { $product } のメールアドレスの確認
mail-verify-email-body = { $product } アカウントのこのメールアドレスを確認するには、{ $hours } 時間以内に次のリンクを開いてください:

    { $link }

    お心当たりがない場合は、このメールを無視してください。何も変更されません。
mail-email-changed-subject = { $product } アカウントのメールアドレスが変更されました
mail-email-changed-body = { $product } アカウント { $username } のメールアドレスが、このアドレスから { $new_email } に変更されました。

    ご本人による変更であれば、何もする必要はありません。お心当たりがない場合は、パスワードを再設定し、{ $product } の管理者に連絡してください。他の人があなたのアカウントを使っているおそれがあります。
mail-factor-locked-subject = { $product } アカウントへのサインインを一時停止しました
mail-factor-locked-body = { $product } アカウント { $username } に正しいパスワードでサインインした後、認証アプリまたはリカバリーコードのコードが何度も誤って入力されました。今後 { $minutes } 分間、コードは受け付けられません。

    ご本人であれば、時間をおいて再度お試しいただくか、パスキーをお持ちであればパスキーでサインインしてください。お心当たりがない場合は、他の人があなたのパスワードを知っています。すぐにパスワードを再設定し、できない場合は { $product } の管理者に連絡してください。

## デバイス確認ページ（RFC 8628：テレビ、コマンドライン、エージェントがサインインを求める）
device-title = デバイスを接続
device-heading = デバイスを接続
device-enter = デバイスに表示されているコードを入力してください。
device-code-label = コード
device-continue = 続ける
device-code-malformed = デバイスが表示する形式のコードではありません（BCDF-GHJK のような 8 文字）。
device-code-unknown = このコードは認識できないか、有効期限が切れています。デバイスの画面と見比べるか、デバイスでやり直してください。
device-code-too-many = 一致しないコードが多すぎます。数分待ってからもう一度お試しください。
device-confirm-heading = { $client } を接続しますか？
device-compare = デバイスに表示されているコードと同じか確認してください：
device-warning = ご自身のデバイスで今操作を始めた場合にのみ許可してください。このコードを送ってきた相手は、あなたのアカウントにアクセスできるようになるおそれがあります。
device-approved-heading = デバイスを接続しました
device-approved = { $client } を許可しました。デバイスに戻ってください。自動的に続行します。
device-denied-heading = リクエストを拒否しました
device-denied = { $client } は許可されませんでした。デバイスにその旨が表示されます。
err-device-form-expired = このフォームの有効期限が切れました。デバイスのコードをもう一度入力してください。
err-device-request-gone = このデバイスのリクエストはもう応答を待っていません（有効期限切れか、応答済みです）。デバイスでやり直してください。
err-device-not-signed-in = サインインが完了しませんでした。デバイスに表示されているアドレスを開いて、もう一度お試しください。
err-device-needs-stronger = このアプリケーションにはより強いサインイン（2 要素目またはパスキー）が必要です。コードをもう一度入力し、それを使ってサインインしてください。
console-type-device = ブラウザのないデバイス
console-type-device-hint = コードを表示するテレビ、コマンドライン、その他のデバイス：シークレットなし、リダイレクトなし。ユーザーは別の画面でサインインします（デバイス認可グラント）。
console-grant-device = 別の画面でユーザーをサインインさせる（デバイスコード）
console-grant-ciba = アプリケーションが求めるサインインをアカウントページで承認させる（CIBA、poll）
console-created-public-device = このアプリケーションにはシークレットがありません。クライアント ID で自身を示し、ユーザーは表示されたコードを使って別の画面でサインインします。

## アカウントページのサインイン要求（CIBA）
account-requests = サインイン要求
account-requests-intro = 別の場所（コールセンター、端末、別のデバイス）で開始したサインインの承認をアプリケーションが求めています。自分で開始し、メッセージがそこに表示されているものと一致する場合にのみ承認してください。
account-request-binding = メッセージ：{ $message }
account-request-asked = 要求日時
account-request-until = 有効期限
account-request-approve = 承認
account-request-approve-named = { $name } のサインイン要求を承認
account-request-deny = 拒否
account-request-deny-named = { $name } のサインイン要求を拒否
notice-request-approved = サインイン要求を承認しました。アプリケーションはサインインしました。
notice-request-denied = サインイン要求を拒否しました。
account-user-code = サインイン要求のコード
account-user-code-intro = 一部のアプリケーション（コールセンター、店舗の端末など）は、ここでのサインインの承認を求めるときにこのコードを示す必要があります。信頼できる相手にだけ伝えてください。コードのない要求は拒否されます。
account-user-code-is-set = コードを設定済みです。
account-user-code-not-set = コードは設定されていません。
account-user-code-new = 新しいコード（4～64 文字）
account-user-code-save = コードを保存
account-user-code-remove = コードを削除
notice-user-code = サインイン要求のコードを保存しました。
notice-user-code-removed = サインイン要求のコードを削除しました。
notice-user-code-invalid = コードは改行を含まない 4～64 文字にしてください。何も変更されていません。
err-ciba-needs-stronger = このアプリケーションにはより強いサインイン（2 要素目またはパスキー）が必要です。サインアウトし、それを使ってもう一度サインインしてから要求を承認してください。
err-ciba-push-failed = アプリケーションへの回答を準備できませんでした。何も記録されていません。しばらくしてからもう一度お試しください。
mail-ciba-subject = { $product } へのサインインの承認をアプリケーションが求めています
mail-ciba-body = { $client } が { $product } アカウントでのサインインの承認を求めています。{ $binding }

    承認または拒否するには、アカウントページを開いてください：

    { $link }

    心当たりがない場合は拒否してください。承認するまで何も共有されません。
mail-ciba-binding = メッセージ：「{ $message }」

# テナント（デプロイメントのコンソールのみ）
console-tenants = テナント
console-tenants-intro = テナントはそれぞれ独立した発行者で、鍵、アプリケーション、ユーザー、サインイン画面を個別に持ちます。テナントのアプリケーションとユーザーは、その発行者の URL に /console を付けたテナント自身のコンソールで管理します。
console-col-slug = スラッグ
console-col-issuer = 発行者
console-col-actions = 操作
console-tenant-active = 有効
console-tenant-disabled = 無効
console-tenant-deleting = 削除中
console-tenant-deleted = 削除済み
console-tenant-disable = 無効にする
console-tenant-enable = 有効にする
console-tenant-delete = すべてのデータとともに削除
console-tenant-confirm = 削除するには { $slug } と入力してください
console-tenant-new = 新しいテナント
console-tenant-slug = スラッグ
console-tenant-slug-help = URL に使う名前です（英小文字、数字、ハイフン）。変更できず、再利用もされません。
console-tenant-host = 専用のホスト（任意）
console-tenant-name = 画面に表示する名前（任意）
console-tenant-settings-title = テナントの設定
console-tenant-settings = { $slug } の設定
console-tenant-settings-intro = このテナントがデプロイメントと異なる設定にしている項目です。空欄または「デプロイメントの設定」のままにすると、デプロイメントの値を使います。
console-tenant-pages = 画面
console-tenant-sign-in = サインインと登録
console-tenant-deployments = デプロイメントの設定
console-tenant-locale = 既定の言語
console-tenant-css = スタイルシート
console-tenant-css-help = デプロイメントのスタイルシートの後に、このテナントの画面にだけ追加されます。組み込みの変数を設定するのが簡単です: :root { "{" } --accent: #0b7a55; --bg: #eef6f1; { "}" } ここでは 8,192 文字まで。それより大きいものは authrim tenant set SLUG --css FILE で設定します。
console-tenant-css-elsewhere = { $bytes } バイト。CLI または管理 API で設定されています (このフォームには長すぎます)。保存しても残ります。
console-tenant-css-remove = スタイルシートを削除する
console-tenant-logo = ロゴ
console-tenant-logo-set = { $kind }、{ $bytes } バイト。
console-tenant-logo-none = デプロイメントのもの。
console-tenant-logo-cli = ロゴ（.svg または .png ファイル）は次のコマンドでアップロードします: authrim tenant set { $slug } --logo ファイル
console-tenant-logo-remove = ロゴを削除する
console-tenant-password-min = パスワードの最短の長さ（8〜1024）
console-tenant-mfa = 2 要素目
console-tenant-mfa-optional = 任意
console-tenant-mfa-required = 毎回のサインインで必須
console-tenant-mfa-passkey = 毎回のサインインでパスキーが必須
console-tenant-signup = セルフ登録
console-tenant-on = 有効
console-tenant-off = 無効
console-tenant-mail-from = メールの差出人（名前 &lt;アドレス&gt;）
console-tenant-api-only = 独自の ID プロバイダー（{ $upstreams } 件）とリソースサーバー（{ $resources } 件）は、管理 API または authrim tenant set --settings-file で設定します。

# コンソールの組織と管理用認証情報
console-role-org-admin = 組織管理者
console-organizations = 組織
console-org-only-heading = 管理対象の組織の外です
console-org-only = あなたのコンソール権限は、管理している組織のメンバーに限られます。
console-orgs-intro = アプリケーションの顧客企業です。メンバー（組織ロール付き）、メールドメイン、必要に応じて独自の ID プロバイダーを持ちます。
console-orgs-intro-org-admin = あなたが管理する組織です。メンバーの追加・削除とロールの設定ができます。
console-no-orgs = まだ組織はありません。
console-org-new = 新しい組織
console-org-slug-help = URL とトークン（organization=、org_name）での名前です。英小文字、数字、ハイフン。
console-org-logo = ロゴ（https の URL、任意）
console-org-domains = メールドメイン
console-org-domains-help = 1 行に 1 つ。確認済みのメールアドレスがこれらのドメインにあるユーザーは、次回のサインインでメンバーになります。企業が管理するドメインだけを指定してください。
console-org-upstream = 接続
console-org-upstream-none = なし（テナントのサインイン）
console-org-upstream-help = メンバーがサインインする ID プロバイダーです。組織向けのサインインは直接そこへ移動します。
console-org-heading = 組織 { $org }
console-org-settings = 設定
console-org-settings-tenant = ドメインと接続はテナントの管理者が設定します。
console-org-members = メンバー
console-org-roles-help = ロールは空白で区切ります。アプリケーションは org_roles クレームで受け取ります。ロール admin を持つメンバーは、コンソールでこの組織の管理者になります。
console-org-joined = 参加日時
console-org-roles-of = { $user } のロール
console-org-remove-named = { $user } を削除
console-org-no-members = まだメンバーはいません。
console-org-add-member = メンバーを追加
console-org-member-user = ユーザー名またはメールアドレス（完全一致）
console-org-member-roles-help = 任意、空白区切り。既存のメンバーを追加すると、そのロールが設定されます。
console-org-add = 追加
console-org-delete = 組織とそのメンバーシップを削除
console-org-confirm-wrong = 入力したスラッグが一致しません。何も削除されていません。
console-org-self = 自分自身や自分の admin ロールは削除できません。別の管理者に依頼してください。
console-back-organization = 組織に戻る
console-back-organizations = 組織一覧に戻る
console-none = なし。
console-done-revoked = 失効しました。
console-credentials = 管理用認証情報
console-credentials-intro = このテナントの管理 API 用トークン（スクリプト、デプロイ）です。このテナントでのみ有効で、失効させると直ちに拒否されます。
console-no-credentials = まだ認証情報はありません。
console-credential-expires = 有効期限
console-credential-never = なし
console-credential-active = 有効
console-credential-expired = 期限切れ
console-credential-revoked = 失効
console-credential-revoke = 失効させる
console-credential-revoke-named = { $name } を失効させる
console-credential-new = 新しい認証情報
console-credential-name-help = 保持者（一覧と監査ログに表示されます）。
console-credential-days = 有効日数（空欄：失効させるまで）
console-credential-created = 認証情報を作成しました
console-credential-once = 今すぐトークンをコピーしてください。表示は一度だけで、後から読むことはできません。
console-credential-token = トークン
console-organization = 組織
login-password-organization = 組織のアカウントでサインインする場合は、パスワードを空のままにしてください。勤務先のメールアドレスで組織のサインインに移動します。
err-password-missing = パスワードを入力してください。
# 組織: メールによる招待と、サインイン時の組織の選択
org-invitation-title = 組織への招待
org-invitation-heading = { $organization } に参加
org-invitation-roles = この組織でのあなたのロール:
org-invitation-accept = 招待を受け入れる
org-invitation-wrong-user = { $user } としてサインインしていますが、このアカウントの確認済みメールアドレスは招待の送信先ではありません。招待されたアドレスのアカウント (アドレスが確認済みであること) でサインインしてください。
org-invitation-switch = 別のアカウントでサインイン
org-invitation-accepted = { $organization } のメンバーになりました。
err-invitation-unknown = この招待リンクは無効です。リンク全体がコピーされているか確認するか、新しい招待を依頼してください。
err-invitation-used = この招待はすでに受け入れられています。
err-invitation-revoked = この招待は取り消されました。組織に新しい招待を依頼してください。
err-invitation-expired = この招待の有効期限が切れています。組織に新しい招待を依頼してください。
err-invitation-form-expired = このページの有効期限が切れました。招待リンクをもう一度開いてください。
err-invitation-not-signed-in = サインインが完了しませんでした。招待リンクをもう一度開いてください。
mail-org-invitation-subject = { $product } の組織に招待されました
mail-org-invitation-body = { $product } の { $organization } に招待されました。受け入れるには、{ $days } 日以内に次のリンクを開き、このメールアドレスでサインイン (またはアカウントを作成) してください:

    { $link }

    この招待に心当たりがない場合は、このメールを無視してください。
org-choose-heading = 組織を選択
err-org-choose = 表示された組織から選んでください。
console-organization-required = 組織を必須にする (メンバーのみ。複数の組織のメンバーは 1 つを選択)
