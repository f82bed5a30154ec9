# Authrim の画面（日本語）。
language-name = 日本語

continue-to = { $client } を続行するには
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
consent-document-host = このアプリケーションはここに登録されていません。<strong>{ $host }</strong> 上のアドレスで識別されています。
consent-asks = { $client } が求めている権限:
consent-resources = アクセス先:
consent-allow = 許可
consent-deny = 拒否
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

form-post-title = アプリケーションに戻っています
form-post-heading = アプリケーションに戻っています

landing-title = ようこそ
landing-heading = ようこそ
landing-intro = これは OpenID Connect のサインインサービスです。アプリケーションからサインインのためにここへ案内されます。
landing-account = アカウント: パスキー、認証アプリ、リカバリーコード
landing-discovery = ディスカバリー文書（開発者向け）

demo-title = サインインしました
demo-heading = サインインしました
demo-intro = Authrim が認可コードを返しました。{ $seconds } 秒以内に、<code>CLIENT_SECRET</code> をサーバー起動時に端末に表示されたクライアントシークレットに置き換えて引き換えてください:
demo-copy = コマンドをコピー

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
password-new = 新しいパスワード（8 文字以上）
password-confirm = 新しいパスワード（確認）
password-submit = パスワードを変更
password-mismatch = 2 つの新しいパスワードが一致しません。
password-current-wrong = 現在のパスワードが正しくありません。
password-too-weak = 新しいパスワードは 8 文字以上 1024 文字以下にしてください。

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
