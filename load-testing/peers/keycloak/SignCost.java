// The cost of one RS256 signature (RSA-2048, PKCS#1 v1.5, SHA-256) through the JDK's default
// provider for SHA256withRSA (SunRsaSign), which Keycloak signs with, in a quiet loop: prints
// microseconds. As Keycloak does (AsymmetricSignatureSignerContext), each signature gets a fresh
// Signature from Signature.getInstance. 2,000 signatures warm the JIT up before 2,000 are timed.
// `java SignCost.java` (single-file source launch, JDK 11+).
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;

public class SignCost {
    static byte[] sign(PrivateKey key, byte[] message) throws Exception {
        Signature signature = Signature.getInstance("SHA256withRSA");
        signature.initSign(key);
        signature.update(message);
        return signature.sign();
    }

    public static void main(String[] args) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        PrivateKey key = generator.generateKeyPair().getPrivate();
        byte[] message = "bench message".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 2000; i++) {
            sign(key, message);
        }
        final int n = 2000;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            sign(key, message);
        }
        System.out.printf(java.util.Locale.ROOT, "%.1f%n", (System.nanoTime() - start) / 1e3 / n);
    }
}
